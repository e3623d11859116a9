"""collablab.testing's conformance checks over every registered study and every case it offers
(every policy x protocol x structure), and proof that each check can fail."""

from __future__ import annotations

import pytest

from collablab import testing as T
from collablab.runs import studies


def _cases():
    with T.scripted_server() as url:
        return [(name, case, spec, url) for name in sorted(studies())
                for case, spec in T.study_module(name).conformance_cases(url).items()]


CASES = _cases()


@pytest.fixture(scope="module")
def server_url():
    with T.scripted_server() as url:
        yield url


def test_every_study_offers_cases_for_every_policy_and_protocol():
    from collablab.agents import POLICIES
    from collablab.protocols import PROTOCOLS

    assert "mecobench" in studies()
    names = {c for s, c, _, _ in CASES if s == "mecobench"}
    for policy in POLICIES:
        for proto in PROTOCOLS:
            assert {f"{policy}/{proto}/parallel", f"{policy}/{proto}/sequential"} <= names


@pytest.mark.parametrize("study,case", [(s, c) for s, c, _, _ in CASES])
def test_conformance(study, case, server_url):
    mod = T.study_module(study)
    T.check_case(mod, mod.conformance_cases(server_url)[case], server_url)


def test_checks_fail_on_broken_records_and_teams():
    mod = T.study_module("mecobench")
    spec = mod.conformance_cases("http://127.0.0.1:9/v1")["heuristic/broadcast/parallel"]
    rec = T.api_test(mod, spec)
    broken = {"episode": {**rec["episode"], "cr": 1.5}, "steps": [{**rec["steps"][0], "status": "weird"}]}
    with pytest.raises(AssertionError, match="cr|status"):
        T.check_records(broken, mod.RECORD_SCHEMA)

    class Drifting:
        RECORD_SCHEMA = mod.RECORD_SCHEMA
        calls = 0

        def run_spec(self, spec, wrap_team=None):
            Drifting.calls += 1
            return mod.run_spec({**spec, "seed": Drifting.calls})

    with pytest.raises(AssertionError, match="differ"):
        T.seed_test(Drifting(), spec)

    class Unsabotaged(Drifting):
        is_invalid = staticmethod(mod.is_invalid)

        def sabotage(self, team):
            return team

        def run_spec(self, spec, wrap_team=None):
            return mod.run_spec({**spec, "policy": "oracle"})

    with pytest.raises(AssertionError, match="illegal"):
        T.invalid_action_test(Unsabotaged(), spec)
