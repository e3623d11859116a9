"""Bad notebook parameters stop before the first episode (MECoBench: before its task suite too)
with one line naming the parameter and its allowed values: ``collablab run`` exits 2 on them and on
an endpoint that answers but is wrong, 1 on a server that does not answer (``collablab episodes``
alike); a notebook's ``api_key_env`` reaches a server that wants a key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import free_port, notebook_defaults

from collablab.cli import parameter_set
from collablab.llm.fake_server import FakeOpenAIServer
from collablab.runs import ParameterError, preflight_endpoints
from collablab.studies import dynahmrc, mastracebench, mecobench, partnr
from collablab.studies.dynahmrc import experiments as E06
from collablab.studies.mastracebench import experiments as E05
from collablab.studies.mecobench import experiments as EMB
from collablab.studies.partnr import experiments as E07

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
NOTEBOOKS = {nb.stem[:2]: nb for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))}
#: MECoBench's name of each of its notebooks (run_notebook's first argument).
MECOBENCH_NAMES = {"01": "01_collaboration", "02": "02_modes", "03": "03_priors", "04": "04_behaviours"}
KEY_ENV = "COLLABLAB_TEST_NB_KEY"
SCRIPT = Path(sys.executable).parent / "collablab"
CLI = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "collablab.cli"]


@pytest.fixture(autouse=True)
def _live(monkeypatch, tmp_path):
    """Live cache mode (a replay checks no endpoint), outputs and cache under tmp_path."""
    monkeypatch.delenv("COLLABLAB_LLM_CACHE_MODE", raising=False)
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path / "outputs"))
    monkeypatch.setenv("COLLABLAB_LLM_CACHE", str(tmp_path / "llm_cache.sqlite"))


def check(nb: str, P: dict) -> None:
    """The notebook's parameter check (no network, no suite)."""
    if nb in MECOBENCH_NAMES:
        EMB.check_parameters(MECOBENCH_NAMES[nb], P)
    else:
        {"05": E05, "06": E06, "07": E07}[nb].check_parameters(P)


def defaults(nb: str, **over) -> dict:
    return {**notebook_defaults(NOTEBOOKS[nb]), **over}


LLM = {"backend": "llm", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
CASES = [
    # notebook 05 (MASTraceBench)
    ("05", {"methods": []}, r"^methods: \[\] is not allowed; allowed: a non-empty list of Single-Agent, Consistency, "),
    ("05", {"methods": ["MAPR"]}, r"^methods: \['MAPR'\] is not allowed; allowed: lists with 'Single-Agent'"),
    ("05", {"methods": ["Single-Agent", "Solo"]}, r"^methods: 'Solo' is not allowed; allowed: Single-Agent, "),
    ("05", {"n_units": "ten"}, r"^n_units: 'ten' is not allowed; allowed: a mapping of name -> integer >= 0"),
    ("05", {"n_units": {"mapf": 30, "option_gen": 30, "evidence_chain": 30, "gomoku": -1, "negotiation": 2,
                        "tactic_duel": 2}}, r"^n_units: gomoku: must be an integer >= 0, got -1$"),
    ("05", {"n_units": {"mapf": 2}}, r"^n_units: has no count for 'option_gen'; give one for every task in tasks$"),
    ("05", {"runs": []}, r"^runs: \[\] is not allowed; allowed: a non-empty list of integers >= 0$"),
    ("05", {"runs": [0, 0]}, r"^runs: 0 is listed twice"),
    ("05", {"tasks": "mapf"}, r"^tasks: 'mapf' is not allowed; allowed: a list of mapf, option_gen, "),
    ("05", {"tasks": ["mapf"]}, r"^table4_settings: Table 4 runs on evidence_chain, which tasks or n_units leave out"),
    ("05", {"table4_settings": [{"label": "x", "proposers": 0, "rounds": 1}]},
     r"^table4_settings\[0\]\.proposers: must be an integer >= 1, got 0$"),
    ("05", {"table4_settings": [{"label": "x", "proposers": 3, "rounds": 1, "agent_profiles": "strong,genius"}]},
     r"^table4_settings\[0\]: agent_profiles: 'genius' is not allowed; allowed: strong, medium, weak"),
    ("05", {"max_decisions": 0}, r"^max_decisions: must be an integer >= 1 or None, got 0$"),
    ("05", {"backend": "lm"}, r"^backend: 'lm' is not allowed; allowed: heuristic, llm$"),
    ("05", {"backend": "llm"}, r"^model: backend 'llm' needs a model name"),
    ("05", {"llm_cache_mode": "x"}, r"^llm_cache_mode: 'x' is not allowed; allowed: "),
    # notebook 06 (DynaHMRC)
    ("06", {"methods": []}, r"^methods: \[\] is not allowed; allowed: a non-empty list of dynahmrc, coela, coherent$"),
    ("06", {"ablations": ["w/o brains"]}, r"^ablations: 'w/o brains' is not allowed; allowed: full, w/o history, "),
    ("06", {"T": 7}, r"^T: 7 is not allowed with variation CTO; allowed: 3, 5, 10$"),
    ("06", {"kinds": ["bake"]}, r"^kinds: 'bake' is not allowed; allowed: pack, sort, sandwich$"),
    ("06", {"runs": [-1]}, r"^runs: -1 is not allowed; allowed: integers >= 0$"),
    ("06", {"search_tasks": -1}, r"^search_tasks: must be an integer >= 0, got -1$"),
    ("06", {"backend": "lm"}, r"^backend: 'lm' is not allowed; allowed: heuristic, llm$"),
    ("06", {"llm_options": {"foo": 1}}, r"^llm_options: 'foo' is not allowed; allowed: llm_cache, "),
    ("06", {**LLM, "base_url": "htp://x"}, r"^base_url: 'htp://x' must start with http:// or https://$"),
    # notebook 07 (PARTNR), constrained checked on every backend
    ("07", {"constrained": "regex"},
     r"^constrained: 'regex' is not allowed; allowed: auto, grammar, json_schema, none$"),
    ("07", {"conditions": []}, r"^conditions: \[\] is not allowed; allowed: a non-empty list of Obj, OAS, "),
    ("07", {"family": "all"},
     r"^family: 'all' is not allowed; allowed: rearrange, spatial, temporal, object_state, mixed$"),
    ("07", {"backend": "lm"}, r"^backend: 'lm' is not allowed; allowed: heuristic, llm$"),
    ("07", {"api_key_env": "sk-abc123"}, r"^api_key_env: must be the NAME of an environment variable"),
    ("07", {**LLM, "provider": "vlm"},
     r"^provider: 'vlm' is not allowed; allowed: auto, openai, vllm, llamacpp, compat$"),
    # notebooks 01-04 (MECoBench)
    ("01", {"n_tasks": 97}, r"^n_tasks: must be an integer from 1 to 96 "),
    ("01", {"team_sizes": [0, 2]}, r"^team_sizes: each must be an integer in 1\.\.10, got \[0, 2\]$"),
    ("01", {"backend": "lm"}, r"^backend: 'lm' is not allowed; allowed: heuristic, llm, oracle$"),
    ("01", {"profile": "strong,weak"}, r"^profile: 2 profiles for 1 agents"),
    ("01", {"llm_options": "x"}, r"^llm_options: 'x' is not allowed; allowed: a mapping of spec keys"),
    ("01", {**LLM, "llm_options": {"llm_replicas": "ftp://x"}}, r"^llm_replicas: 'ftp://x' must start with http"),
    ("01", {**LLM, "llm_options": {"pipeline": "magic"}}, r"^pipeline: 'magic' is not allowed; allowed: paper, assisted$"),
    ("01", {"workers": 0}, r"^workers: must be an integer >= 1, got 0$"),
    ("02", {"protocols": ["broadcast", "shout"]},
     r"^protocols: 'shout' is not allowed; allowed: isolated, broadcast, "),
    ("02", {"scaling_sizes": "2,3"}, r"^scaling_sizes: '2,3' is not allowed; allowed: a non-empty list of integers"),
    ("02", {"mixed_teams": ["weak,genius"]}, r"^mixed_teams: profile: 'genius' is not allowed; allowed: "),
    ("02", {"ray_address": "ray://head:10001"}, r"^ray_address: 'ray://head:10001' is not allowed with engine 'local'"),
    ("03", {"priors": []}, r"^priors: \[\] is not allowed; allowed: a non-empty list of full, no_appearance, "),
    ("03", {"seeds": [-1]}, r"^seeds: -1 is not allowed; allowed: integers >= 0$"),
    ("03", {"engine": "k8s"}, r"^engine: 'k8s' is not allowed; allowed: local, ray$"),
    ("04", {"profiles": []}, r"^profiles: \[\] is not allowed; allowed: a non-empty list of strings$"),
    ("04", {"protocol": "shout"}, r"^protocol: 'shout' is not allowed; allowed: isolated, broadcast, "),
    ("04", {"budget": 0}, r"^budget: must be an integer >= 1 or None, got 0$"),
]


@pytest.mark.parametrize("nb,over,message", CASES, ids=[f"{c[0]}-{'-'.join(c[1])}" for c in CASES])
def test_a_bad_parameter_is_one_line_naming_it(nb, over, message):
    with pytest.raises(ValueError, match=message) as e:
        check(nb, defaults(nb, **over))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("nb", sorted(NOTEBOOKS))
def test_defaults_and_every_parameter_set_pass(nb):
    path = ROOT / "params" / f"{NOTEBOOKS[nb].stem}.yaml"
    sets = ["default", *(yaml.safe_load(path.read_text()) or {})] if path.exists() else ["default"]
    for name in sets:
        check(nb, {**notebook_defaults(NOTEBOOKS[nb]), **parameter_set(NOTEBOOKS[nb], name, ROOT)})


@pytest.mark.parametrize("E,over,message", [
    (E05, {"methods": []}, "^methods: "),
    (E06, {"ablations": ["w/o brains"]}, "^ablations: "),
    (E07, {"constrained": "regex"}, "^constrained: "),
], ids=["05", "06", "07"])
def test_run_notebook_raises_parameter_error_before_any_unit(E, over, message, tmp_path):
    P = {**notebook_defaults(NOTEBOOKS[E.NOTEBOOK[:2]]), **over}
    with pytest.raises(ParameterError, match=message):
        E.run_notebook(P)
    assert not (tmp_path / "outputs").exists()


@pytest.fixture
def no_suite(monkeypatch):
    """MECoBench's task suite must not be loaded (it takes half a minute to generate)."""
    def refuse(*a, **k):
        raise AssertionError("the task suite was loaded before the parameters and endpoints were checked")

    monkeypatch.setattr(mecobench.grids, "tasks_of", refuse)


def test_mecobench_checks_its_endpoint_before_the_suite(no_suite):
    P = notebook_defaults(NOTEBOOKS["01"])
    with FakeOpenAIServer() as server:
        llm = {**P, "backend": "llm", "model": "fake-model", "base_url": server.base_url}
        with pytest.raises(ParameterError, match=r"^model: 'nope' is not served by .*; it serves: fake-model$"):
            EMB.run_notebook("01_collaboration", {**llm, "model": "nope"})
        with pytest.raises(ParameterError, match=r"^base_url: .*/v2/models answered HTTP 404"):
            EMB.run_notebook("01_collaboration", {**llm, "base_url": server.base_url[:-1] + "2"})
        with pytest.raises(ParameterError, match=r"^model: 'weak' is not served by .*; it serves: fake-model$"):
            EMB.run_notebook("02_modes", {**notebook_defaults(NOTEBOOKS["02"]), **llm,
                                          "mixed_teams": ["weak,fake-model"]})
    down = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ParameterError, match=r"^base_url: .* does not answer .*--wait-for-server"):
        EMB.run_notebook("01_collaboration", {**llm, "base_url": down})


def _notebook_specs(nb: str, P: dict, monkeypatch: pytest.MonkeyPatch) -> tuple[object, list[dict]]:
    """(study, the specs notebook ``nb`` builds from P); MECoBench's with placeholder task ids."""
    if nb == "01":
        monkeypatch.setattr(mecobench.grids, "task_ids", lambda structure, n, *a, **k: [f"t{i}-{structure[0]}"
                                                                                      for i in range(n)])
        return mecobench, EMB.collaboration_specs(P)
    study, E = {"05": (mastracebench, E05), "06": (dynahmrc, E06), "07": (partnr, E07)}[nb]
    return study, E.specs(P)


@pytest.mark.parametrize("nb", ["01", "05", "06", "07"])
def test_api_key_env_and_llm_options_reach_a_server_that_wants_a_key(nb, monkeypatch):
    with FakeOpenAIServer(require_key="s3cret-nb") as server:
        P = defaults(nb, backend="llm", model="fake-model", base_url=server.base_url, api_key_env=KEY_ENV,
                     llm_options={"llm_outage_wait_s": 5, "llm_max_concurrency": 3},
                     **({} if nb == "05" else {"n_tasks": 1}))
        check(nb, P)
        study, specs = _notebook_specs(nb, P, monkeypatch)
        assert specs and all(s["api_key_env"] == KEY_ENV and s["llm_outage_wait_s"] == 5 for s in specs)
        (ep,) = study.endpoints(specs[0])
        assert (ep.api_key_env, ep.outage_wait_s, ep.max_concurrency) == (KEY_ENV, 5.0, 3)
        with pytest.raises(ParameterError, match=f"^api_key_env: {KEY_ENV} is not set$"):
            preflight_endpoints([ep])
        monkeypatch.setenv(KEY_ENV, "wrong")
        with pytest.raises(ParameterError, match=f"^api_key_env: the key in {KEY_ENV} was rejected"):
            preflight_endpoints([ep])
        monkeypatch.setenv(KEY_ENV, "s3cret-nb")
        assert preflight_endpoints([ep])[ep.alias]["id"] == "fake-model"
        _, keyless = _notebook_specs(nb, {**P, "api_key_env": None}, monkeypatch)
        with pytest.raises(ParameterError, match=r"^api_key_env: .* wants a key"):
            preflight_endpoints(study.endpoints(keyless[0]))


def test_a_notebook_run_with_its_key_runs_and_without_it_stops_before_any_unit(monkeypatch, tmp_path):
    with FakeOpenAIServer(require_key="s3cret-nb") as server:
        P = defaults("05", backend="llm", model="fake-model", base_url=server.base_url, api_key_env=KEY_ENV,
                     tasks=["mapf"], methods=["Single-Agent"], runs=[0], table4_settings=[], workers=1,
                     n_units={"mapf": 1}, llm_cache_mode="off")
        with pytest.raises(ParameterError, match=f"^api_key_env: {KEY_ENV} is not set$"):
            E05.run_notebook(P)
        assert not (tmp_path / "outputs").exists()
        monkeypatch.setenv(KEY_ENV, "s3cret-nb")
        episodes, _, _ = E05.run_notebook(P)
    assert len(episodes) == 1 and server.n_requests >= 1


# -- the commands: exit 2 for bad input, 1 for a server that does not answer -------------------------

def _cli(tmp_path: Path, *args: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLLABLAB_")}
    env.update(COLLABLAB_OUTPUTS=str(tmp_path / "outputs"), COLLABLAB_LLM_CACHE=str(tmp_path / "llm_cache.sqlite"),
               PYTHONPATH=os.pathsep.join([str(TESTS), str(ROOT / "lib"), env.get("PYTHONPATH", "")]),
               **(extra_env or {}))
    return subprocess.run([*CLI, *args, "--out", str(tmp_path / "nb")], env=env, capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def test_collablab_run_exits_2_with_one_line_naming_the_parameter_and_runs_nothing(tmp_path):
    r = _cli(tmp_path, "run", "05", "-p", "methods", "[]")
    assert r.returncode == 2, r.stderr
    named = [line for line in r.stderr.splitlines() if "methods:" in line]
    assert named == [r.stderr.splitlines()[-1]], r.stderr
    assert named[0].startswith("error: 05_proposal_trajectories (default): methods: [] is not allowed; allowed: ")
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "outputs" / "05_proposal_trajectories").exists()  # no run folder: no episode ran
    r = _cli(tmp_path, "run", "06", "--dry-run", "-p", "ablations", '["w/o brains"]')
    assert r.returncode == 2 and r.stderr.splitlines()[-1].startswith(
        "error: 06_heterogeneous_dynamic_teams (default): ablations: 'w/o brains' is not allowed; allowed: full, "), \
        r.stderr


def test_collablab_run_exits_2_on_a_missing_key_and_on_a_server_that_does_not_answer(tmp_path):
    llm = ["-p", "backend", "llm", "-p", "model", "fake-model", "-p", "api_key_env", KEY_ENV, "-p", "methods",
           "[Single-Agent]", "-p", "tasks", "[mapf]", "-p", "table4_settings", "[]"]
    with FakeOpenAIServer(require_key="s3cret-nb") as server:
        r = _cli(tmp_path, "run", "05", *llm, "-p", "base_url", server.base_url)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines()[-1] == f"error: 05_proposal_trajectories (default): api_key_env: {KEY_ENV} is not set"
    r = _cli(tmp_path, "run", "05", *llm, "-p", "base_url", f"http://127.0.0.1:{free_port()}/v1",
             extra_env={KEY_ENV: "s3cret-nb"})
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines()[-1].startswith("error: 05_proposal_trajectories (default): base_url: ")
    assert "does not answer" in r.stderr and "--wait-for-server" in r.stderr
    assert not (tmp_path / "outputs" / "05_proposal_trajectories").exists()


def test_collablab_episodes_exits_2_on_no_answer_and_on_an_unserved_model(tmp_path, capsys):
    from collablab.runs.__main__ import main

    def run(base_url: str, model: str) -> int:
        grid = tmp_path / "grid.yaml"
        grid.write_text(yaml.safe_dump({"base": {"task": "mapf", "method": "Single-Agent", "backend": "llm",
                                                 "model": model, "base_url": base_url},
                                        "axes": {"instance": [0, 1]}}))
        return main(["--study", "mastracebench", "--grid", str(grid), "--workers", "1", "--no-progress",
                     "--out-root", str(tmp_path / "runs")])

    assert run(f"http://127.0.0.1:{free_port()}/v1", "fake-model") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: base_url: ") and "--wait-for-server" in err and len(err.splitlines()) == 1
    with FakeOpenAIServer() as server:
        assert run(server.base_url, "nope") == 2
    assert capsys.readouterr().err.startswith("error: model: 'nope' is not served by ")
    assert not (tmp_path / "runs").exists()
