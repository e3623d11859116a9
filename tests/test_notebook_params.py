"""Every parameter of every notebook reaches its run manifest, with the value papermill injected
(not a hand-copied subset), and notebook cells stay thin."""

from __future__ import annotations

import json
from pathlib import Path

import papermill as pm
import pytest

from collablab.notebooks import notebook_paths, parameter_set
from collablab.runs import notebook_parameters

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = notebook_paths(ROOT)


def test_notebook_parameters_keep_plain_values_only():
    import math

    ns = {"n": 3, "xs": (1, 2), "d": {"a": [1.5, None]}, "s": "x", "_private": 1, "In": [], "math": math,
          "f": print, "bad": {1: 2}}
    assert notebook_parameters(ns) == {"n": 3, "xs": [1, 2], "d": {"a": [1.5, None]}, "s": "x"}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_cells_are_thin(nb):
    cells = [c for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"]
    assert "parameters" in cells[0]["metadata"].get("tags", []), "the first code cell is the parameters cell"
    for c in cells[1:]:
        src = "".join(c["source"])
        lines = [line for line in src.splitlines() if line.strip()]
        assert "params = dict(" not in src, "parameters come from S.parameters(globals()), not a hand-copied dict"
        assert not any(line.lstrip().startswith(("def ", "class ", "for ", "while ")) for line in lines), src
        assert len(lines) <= 10, src


@pytest.mark.slow
def test_every_parameter_reaches_the_manifest(tmp_path, monkeypatch):
    nb = ROOT / "notebooks" / "03_priors.ipynb"
    names = set(pm.inspect_notebook(str(nb)))
    params = {**parameter_set(nb, "smoke", ROOT), "n_tasks": 2, "n_resamples": 200, "priors": ["full", "none"]}
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path))
    pm.execute_notebook(str(nb), str(tmp_path / "out.ipynb"), parameters=params, cwd=str(nb.parent),
                        progress_bar=False)
    (manifest,) = (tmp_path / "03_priors").glob("*/manifest.json")
    recorded = json.loads(manifest.read_text())["params"]
    assert names <= set(recorded), sorted(names - set(recorded))
    assert recorded["priors"] == ["full", "none"] and recorded["n_tasks"] == 2
