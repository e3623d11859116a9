"""One unit of the partner-information study from a flat spec: bad input is refused naming the
field before any work, task files with PARTNR's field names load and run, records validate."""

from __future__ import annotations

import json

import pytest

from collablab import testing as T
from collablab.studies import partnr as P
from collablab.studies.partnr.tasks import FAMILIES, generate_task, load_task, load_tasks


@pytest.mark.parametrize("spec,match", [
    ({"oas": "yes"}, "oas: must be true or false"),
    ({"observability": "half"}, "observability: 'half' is not allowed; allowed: partial, full"),
    ({"observability": "full", "ke": True}, "ke is meaningless under full_obs"),
    ({"family": "cooking"}, "family: 'cooking' is not allowed; allowed: rearrange, spatial, temporal, object_state, mixed"),
    ({"task_source": "file"}, "task_file: task_source 'file' needs a path"),
    ({"backend": "gpu"}, "backend: 'gpu' is not allowed; allowed: heuristic, llm"),
    ({"profile": "genius"}, "profile: 'genius' is not allowed"),
    ({"agent_profiles": "default,default,weak"}, "agent_profiles: 3 comma-separated values for 2 agents"),
    ({"backend": "llm"}, "model: backend 'llm' needs a model name"),
    ({"backend": "llm", "model": "m", "constrained": "regex"}, "constrained: 'regex' is not allowed"),
    ({"constrained": "regex"}, "constrained: 'regex' is not allowed"),  # offline too: never silently ignored
    ({"backend": "llm", "model": "m", "base_url": "localhost:8000"}, "base_url: 'localhost:8000' must start with http"),
    ({"max_cycles": 0}, "max_cycles: must be an integer >= 1"),
    ({"backend": "llm", "model": "m", "llm_history": 0}, r"llm_history: 0; allowed: None \(the whole transcript"),
    ({"llm_history": "all"}, r"llm_history: 'all'; allowed: None .* or an integer >= 1"),  # offline too
    ({"llm_history": True}, r"llm_history: True; allowed"),
    ({"colour": "red"}, r"spec: unknown key\(s\) \['colour'\]"),
])
def test_bad_specs_name_the_field(spec, match):
    with pytest.raises(ValueError, match=match):
        P.validate(spec)


def test_every_family_runs_and_records_validate():
    for i, fam in enumerate(FAMILIES):
        rec = P.run_spec({"instance": i, "family": fam, "oas": True, "ke": True})
        T.check_records(rec, P.RECORD_SCHEMA)
        ep = rec["episode"]
        assert ep["family"] == fam and ep["condition"] == "OAS+KE" and ep["backend"] == "heuristic"
        assert ep["planning_cycles"] == ep["robot_planning_cycles"] + ep["human_planning_cycles"] == len(rec["steps"])


def test_task_file_with_partnr_field_names(tmp_path):
    records = [generate_task(0, "spatial"), generate_task(1, "temporal")]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"episodes": records}))
    tasks = load_tasks(path)
    assert [t.episode_id for t in tasks] == [r["episode_id"] for r in records]
    rec = P.run_spec({"task_source": "file", "task_file": str(path), "instance": 1})
    assert rec["episode"]["unit"] == records[1]["episode_id"]
    with pytest.raises(ValueError, match=r"instance: 2 is out of range; .* has tasks 0..1"):
        P.validate({"task_source": "file", "task_file": str(path), "instance": 2})


def test_task_records_are_checked():
    good = generate_task(0, "rearrange")
    bad = {**good, "name_to_receptacle": {"cup_9": "nowhere_0"}}
    with pytest.raises(ValueError, match=r"name_to_receptacle\['cup_9'\]: 'nowhere_0' is not furniture"):
        load_task(bad)
    with pytest.raises(ValueError, match="missing field 'instruction'"):
        load_task({k: v for k, v in good.items() if k != "instruction"})
    wrong = {**good, "evaluation_propositions": [{"function_name": "is_on_top",
                                                  "args": {"object_handles": ["ghost_1"], "receptacle_handles": ["table_0"]}}]}
    with pytest.raises(ValueError, match="ghost_1"):
        load_task(wrong)
    with pytest.raises(ValueError, match="agent_rooms"):
        load_task({**good, "agent_rooms": ["attic_0"]})
    with pytest.raises(ValueError, match="scene_id"):
        load_task({**good, "scene_id": "mars:1"})


def test_sabotage_is_a_recorded_invalid_first_action():
    rec = P.run_spec({"instance": 0}, wrap_team=P.sabotage)
    first = [s for s in rec["steps"] if s["step"] == 0 and s["agent"] == 0][0]
    assert P.is_invalid(first) and "no entity named" in first["feedback"]
    assert rec["episode"]["planning_cycles"] > 1  # the episode went on


def test_profiles_are_per_role_not_per_condition():
    a = P.run_spec({"instance": 2, "agent_profiles": "strong,weak"})
    b = P.run_spec({"instance": 2, "profile": "strong"})
    assert a["episode"]["unit"] == b["episode"]["unit"]
    assert a["steps"] != b["steps"]  # the human's profile changed


VH = __import__("pathlib").Path(__file__).resolve().parents[2] / "shared" / "data" / "virtualhome"


@pytest.mark.parametrize("k", range(1, 8))
def test_tasks_run_in_real_virtualhome_scenes(k):
    path = next(iter(sorted(VH.rglob(f"TestScene{k}_graph.json"))), None) if VH.is_dir() else None
    if path is None:
        pytest.skip("VirtualHome scene graphs not in ../shared/data")
    for i, fam in enumerate(FAMILIES):
        rec = P.run_spec({"instance": i, "family": fam, "scene_id": str(path), "oas": True})
        T.check_records(rec, P.RECORD_SCHEMA)
        assert rec["episode"]["unit"].endswith(path.stem)
        assert rec["episode"]["percent_complete"] > 0 or rec["episode"]["end_reason"] != "done"


def test_trimmed_scenes_are_refused_clearly():
    path = next(iter(sorted(VH.rglob("TrimmedTestScene1_graph.json"))), None) if VH.is_dir() else None
    if path is None:
        pytest.skip("VirtualHome scene graphs not in ../shared/data")
    with pytest.raises(ValueError, match="no bounding_box .* use TestScene"):
        P.validate({"scene_id": str(path)})
