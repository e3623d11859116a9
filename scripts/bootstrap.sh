#!/usr/bin/env bash
# One entry point for the README's two commands.
#   bash scripts/bootstrap.sh run    set up .venv, run every notebook offline on defaults -> outputs/
#                                    (= .venv/bin/collablab run [args]: resumes, skips finished notebooks)
#   bash scripts/bootstrap.sh test   set up .venv, run the whole test suite (pytest + nbval)
# COLLABLAB_LOCAL_MODEL=1 also installs the offline local model and makes its tests mandatory.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e ".[test]"
  "$VENV/bin/python" -m ipykernel install --sys-prefix --name python3 >/dev/null
  # optional real local model (SmolLM2 via llama-cpp-python, ~4-10 min CPU build the first time,
  # then taken from pip's wheel cache)
  if [ "${COLLABLAB_LOCAL_MODEL:-0}" = "1" ]; then
    VENV="$VENV" bash scripts/install_local_model.sh
  fi
  # virtualhome 2.3.0 pins ancient versions of everything: take the code only, and last, so that
  # no later install has pip judge those pins (a --no-deps install checks none).
  "$VENV/bin/python" -m pip install -q --no-deps "virtualhome==2.3.0"
}

case "${1:-}" in
  run)
    setup
    "$VENV/bin/collablab" run "${@:2}"
    ;;
  test)
    setup
    "$VENV/bin/python" -m pytest "${@:2}"
    ;;
  setup)
    setup
    ;;
  *)
    echo "usage: bash scripts/bootstrap.sh {run|test|setup} [extra args]" >&2
    exit 2
    ;;
esac
