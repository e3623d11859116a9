"""Unseen Target Objects (issue 26; dynahmrc.tex appendix lab:obj_generalization, tab:unseen_obj):
the twin of a static Pack Objects task with its targets renamed to classes held out of the
fine-tuning export, the spec key ``objects``, the notebook's unseen block and its table and words."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from collablab.studies.dynahmrc import experiments as E
from collablab.studies.dynahmrc import report as RP
from collablab.studies.dynahmrc.spec import resolve, run_spec
from collablab.studies.dynahmrc.tasks import HOUSEHOLD_OBJECTS, UNSEEN_OBJECTS, generate_task, is_unseen, \
    unseen_targets
from collablab.studies.dynahmrc.training import export_successful

sys.path.insert(0, str(Path(__file__).parent))
from conftest import notebook_defaults  # noqa: E402

NB = Path(__file__).parents[1] / "notebooks" / "06_heterogeneous_dynamic_teams.ipynb"


@pytest.mark.parametrize("seed", range(6))
def test_the_unseen_twin_differs_only_in_the_targets_names(seed):
    seen = generate_task("pack", "medium", "Ma-MoMa-UAV", seed)
    twin = generate_task("pack", "medium", "Ma-MoMa-UAV", seed, objects="unseen")
    assert twin == unseen_targets(seen) and twin.id == seen.id + "-uto"
    assert is_unseen(twin) and not is_unseen(seen)
    assert {twin.object(h)["cls"] for h in twin.targets} <= set(UNSEEN_OBJECTS)
    assert not set(UNSEEN_OBJECTS) & set(HOUSEHOLD_OBJECTS)
    assert twin.text == seen.text.replace(", ".join(seen.targets), ", ".join(twin.targets))
    for a, b in zip(seen.objects, twin.objects):  # same places, positions, containers: only names move
        assert (a["place"], a["pos"], a["inside"]) == (b["place"], b["pos"], b["inside"])
        target_cls = {seen.object(h)["cls"] for h in seen.targets}
        assert (a["cls"] == b["cls"]) == (a["cls"] not in target_cls)  # a look-alike distractor is renamed too
    assert (twin.D, twin.levels, twin.max_steps) == (seen.D, seen.levels, seen.max_steps)


@pytest.mark.parametrize("spec, match", [
    ({"objects": "novel"}, r"^objects: 'novel' is not allowed; allowed: seen, unseen"),
    ({"objects": "unseen", "kind": "sort"}, r"^objects: 'unseen' not allowed with kind 'sort'"),
    ({"objects": "unseen", "variation": "CTO"}, r"^objects: 'unseen' not allowed .* variation 'CTO'"),
])
def test_objects_is_checked_before_any_work(spec, match):
    with pytest.raises(ValueError, match=match):
        resolve(spec)


def test_an_unseen_episode_says_so_and_has_its_own_unit():
    seen = run_spec({"level": "medium"})["episode"]
    twin = run_spec({"level": "medium", "objects": "unseen"})["episode"]
    assert (seen["objects"], twin["objects"]) == ("seen", "unseen")
    assert twin["unit"] != seen["unit"] and twin["task"] == seen["task"] + "-uto"


def test_the_fine_tuning_export_refuses_unseen_targets(tmp_path):
    with pytest.raises(ValueError, match=r"^specs\[1\]\.objects: 'unseen' not allowed in a fine-tuning export"):
        export_successful([{"level": "medium"}, {"level": "medium", "objects": "unseen"}], tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


def _params(**kw):
    return {**notebook_defaults(NB), "kinds": ["pack"], "levels": ["medium"], "teams": ["Ma-MoMa", "Ma-UAV"],
            "n_tasks": 3, "variations": [], "sensitivity": [], "ablations": [], "search_methods": [],
            "dynamic_search": [], "n_resamples": 300, **kw}


def test_the_unseen_block_twins_every_static_medium_pack_task_of_dynahmrc():
    P = _params()
    twins = [s for s in E.specs(P) if s.get("objects") == "unseen"]
    assert sorted((s["team"], s["instance"]) for s in twins) == [(t, i) for t in P["teams"] for i in range(3)]
    assert all(s["method"] == "dynahmrc" and (s["kind"], s["level"]) == ("pack", "medium") for s in twins)
    assert not [s for s in E.specs(_params(unseen_objects=False)) if s.get("objects")]
    assert not [s for s in E.specs(_params(levels=["easy"])) if s.get("objects")]
    with pytest.raises(ValueError, match=r"^unseen_objects: must be true or false"):
        E.check_parameters(_params(unseen_objects="yes"))


def test_the_unseen_table_pairs_twins_and_stays_out_of_every_other_table():
    P = _params()
    eps = pd.DataFrame([run_spec(s)["episode"] for s in E.specs(P)])
    R = RP.read_notebook(eps, pd.DataFrame(), P)
    t = R.tables["unseen_objects"].set_index("objects")
    assert list(t.index) == ["seen", "unseen"] and list(t["n"]) == [6, 6]
    for o in ("seen", "unseen"):
        part = eps[(eps["objects"] == o) & (eps["method"] == "dynahmrc")]
        assert t.loc[o, "success_mean"] == pytest.approx(part["success"].mean(), abs=1e-4)
        assert t.loc[o, "ts_mean"] == pytest.approx(part["ts"].mean(), abs=1e-4)
    # no unseen episode in the static tables: DynaHMRC has as many episodes there as each baseline
    by = R.tables["by_difficulty"].set_index("method_label")["n"]
    assert by["DynaHMRC"] == by["CoELA"] == 6
    words = RP.unseen_objects(R).data
    assert f"{t.loc['seen', 'success_mean']:.1%} of 6 seen tasks" in words
    assert f"{t.loc['unseen', 'success_mean']:.1%} of their unseen twins" in words
    assert "80.0% to 74.1%" in words and "no finding about generalization" in words  # offline: says so
    assert RP.figure(R, "unseen") is not None
