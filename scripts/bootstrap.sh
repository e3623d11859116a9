#!/usr/bin/env bash
# One entry point for the README's commands.
#   bash scripts/bootstrap.sh run [args]   set up .venv (runtime only), run every notebook offline on defaults
#                                          -> outputs/ (= .venv/bin/collablab run [args]: resumes, skips
#                                          finished notebooks)
#   bash scripts/bootstrap.sh test [args]  set up .venv with the test extras (pytest, nbval, hypothesis, Ray),
#                                          run the whole test suite (pytest + nbval) [pytest args]
#   bash scripts/bootstrap.sh lab [FILE] [jupyter args]
#                                          JupyterLab at the project root on 127.0.0.1, opening FILE (default:
#                                          the executed notebook 01, outputs/notebooks/default/01_collaboration.ipynb);
#                                          sets up .venv first if it has no JupyterLab; --allow-root as root;
#                                          further args go to jupyter lab (e.g. --no-browser --port 8888)
#   bash scripts/bootstrap.sh setup        set up .venv with the test extras, run nothing
# COLLABLAB_LOCAL_MODEL=1 also installs the offline local model and makes its tests mandatory.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
# the executed notebook 01 that `collablab run` writes on the default parameters (tests/test_readme.py
# checks that this is the path lib/collablab/cli.py computes)
LAB_DEFAULT=outputs/notebooks/default/01_collaboration.ipynb

# setup [EXTRAS]: create .venv and install the package (with EXTRAS, e.g. "[test]"; none: runtime only)
setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e ".${1:-}"
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

lab() {
  local file=$LAB_DEFAULT
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    file=$1
    shift
  fi
  if [ ! -x "$VENV/bin/jupyter-lab" ]; then
    setup
  fi
  local args=(--ip 127.0.0.1 --ServerApp.root_dir="$PWD")
  if [ "$(id -u)" = "0" ]; then
    args+=(--allow-root)
  fi
  if [ -e "$file" ]; then
    file=$(realpath --relative-to="$PWD" "$file")
    case "$file" in
      ../*) echo "lab: $file is outside the project ($PWD)" >&2; exit 2 ;;
    esac
    # the printed address (and the browser) open the file itself
    args+=(--LabApp.default_url="/lab/tree/$file")
  else
    echo "note: $file does not exist yet (bash scripts/bootstrap.sh run writes it); opening the project root" >&2
  fi
  exec "$VENV/bin/jupyter" lab "${args[@]}" "$@"
}

case "${1:-}" in
  run)
    setup
    "$VENV/bin/collablab" run "${@:2}"
    ;;
  test)
    setup "[test]"
    "$VENV/bin/python" -m pytest "${@:2}"
    ;;
  lab)
    lab "${@:2}"
    ;;
  setup)
    setup "[test]"
    ;;
  *)
    echo "usage: bash scripts/bootstrap.sh {run|test|lab|setup} [extra args]" >&2
    exit 2
    ;;
esac
