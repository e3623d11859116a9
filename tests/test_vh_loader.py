"""The evolving-graph loader imports VirtualHome's executor without its broken top-level package."""

import subprocess
import sys


def test_loader_in_fresh_interpreter_does_not_import_virtualhome_init() -> None:
    code = (
        "import random, sys\n"
        "random.seed(7); before = random.random(); random.seed(7)\n"
        "from collablab.world import vh\n"
        "eg = vh.load()\n"
        "assert hasattr(eg.execution, 'ScriptExecutor')\n"
        "assert 'virtualhome' not in sys.modules, 'top-level virtualhome/__init__ was executed'\n"
        "assert random.random() == before, 'global random state was changed by the import'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
