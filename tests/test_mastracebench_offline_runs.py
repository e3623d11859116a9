"""Every built MAS method on the static tasks with the offline backend (issue 10, items 2 and 6).

The offline backend and the methods meet only through ``roles`` (requests, replies and the
reply formats the methods ask for), so these runs check that contract end to end.
"""

from __future__ import annotations

import functools

from collablab.studies.mastracebench import methods as M
from collablab.studies.mastracebench import metrics as X
from collablab.studies.mastracebench.offline import HeuristicBackend
from collablab.studies.mastracebench.tasks import EvidenceChainTask, MAPFTask, generate_evidence, generate_mapf
from collablab.studies.mastracebench.trajectory import validate_trajectory

STATIC = {"mapf": (MAPFTask(), generate_mapf(20, 0)), "evidence_chain": (EvidenceChainTask(), generate_evidence(20, 0))}


@functools.lru_cache(maxsize=None)
def runs(task_name: str, method: str, seed: int = 0) -> tuple:
    task, insts = STATIC[task_name]
    be = HeuristicBackend("medium", seed=seed)
    return tuple(M.run(method, task, inst, f"{task_name}-{i}", be, M.MethodConfig()) for i, inst in enumerate(insts))


def test_every_method_records_valid_trajectories_and_reruns_identically():
    for name in STATIC:
        for method in M.METHODS:
            trs = runs(name, method)
            for t in trs:
                validate_trajectory(t.to_dict())
            again = [t.to_dict() for t in runs.__wrapped__(name, method)]
            assert again == [t.to_dict() for t in trs], (name, method)


def test_offline_backend_shows_gains_and_regressions():
    """Some method gains over Single-Agent (CG > 0) and some answer loses the best initial
    proposal (GAB Regress): the two mechanisms the paper separates (§3.3)."""
    for name in STATIC:
        single = X.task_score(list(runs(name, "Single-Agent")))
        gains = {m: X.task_score(list(runs(name, m))) - single for m in M.METHODS}
        regress = {m: sum(X.gab(t) == "Regress" for t in runs(name, m)) for m in M.METHODS}
        assert max(gains.values()) > 0, gains
        assert max(regress.values()) > 0, regress
        assert regress["Single-Agent"] == 0  # one proposer: the answer is its proposal


def test_claims_and_votes_reach_the_clears_synthesiser():
    """What the offline claimer and reviewers write is read by CLEARS (``roles`` parsers): the
    synthesiser is shown claims, marked preserve/avoid after cross-agent evaluation."""
    seen: list = []

    class Recording(HeuristicBackend):
        def answer(self, request):
            seen.append(request)
            return super().answer(request)

    task, insts = STATIC["evidence_chain"]
    for method, marked in (("CLEARS", True), ("CLEARS w/o CCE", False)):
        seen.clear()
        M.run(method, task, insts[0], "evidence_chain-0", Recording("medium"), M.MethodConfig())
        synth = [r for r in seen if r.role == "synthesizer"]
        assert len(synth) == 1 and synth[0].context["claims"], method
        stances = {c.get("stance") for c in synth[0].context["claims"]}
        assert (stances <= {"preserve", "avoid"} and stances) if marked else stances == {None}, stances
