"""collablab.testing's conformance checks over every registered study and every case it offers
(every policy x protocol x structure), and proof that each check can fail."""

from __future__ import annotations

import pytest

from collablab import testing as T
from collablab.llm.fake_server import FakeReply
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


# -- issue 23: replies as reasoning models give them --------------------------------------------------
#: The styles where reading the wrong part shows at once; run over every model-backed case (every
#: protocol, method and condition: every role). The whole corpus runs on one case per study.
KEY_STYLES = ("draft_in_inline_thoughts", "draft_in_reasoning_content", "cut_inside_thoughts")
LLM_CASES = [(s, c) for s, c, spec, url in CASES if spec.get("base_url") == url]


@pytest.mark.parametrize("study,case", LLM_CASES)
def test_only_the_final_answer_is_read_and_a_cut_reply_is_truncated(study, case):
    mod = T.study_module(study)
    spec = mod.conformance_cases("http://127.0.0.1:9/v1")[case]
    for style in KEY_STYLES:
        T.reply_style_test(mod, spec, T.REPLY_STYLES[style])


@pytest.mark.parametrize("study", sorted({s for s, _ in LLM_CASES}))
@pytest.mark.parametrize("style", sorted(T.REPLY_STYLES))
def test_every_reply_style_on_one_case_per_study(study, style):
    mod = T.study_module(study)
    first = next(c for s, c in LLM_CASES if s == study)
    T.reply_style_test(mod, mod.conformance_cases("http://127.0.0.1:9/v1")[first], T.REPLY_STYLES[style])


def test_the_style_check_fails_on_a_reader_that_takes_the_draft():
    """A study whose reader took the thoughts' draft (as MECoBench's did before issue 23) fails."""
    mod = T.study_module("mecobench")
    spec = mod.conformance_cases("http://127.0.0.1:9/v1")["llm/isolated/parallel"]
    swapped = T.ReplyStyle("draft_read", lambda good, bad: FakeReply(text=good), "unused")
    with pytest.raises(AssertionError, match="read from a draft"):
        T.reply_style_test(mod, spec, swapped)
    not_cut = T.ReplyStyle("not_cut", lambda good, bad: FakeReply(text=""), "truncated")
    with pytest.raises(AssertionError, match="do not say"):
        T.reply_style_test(mod, spec, not_cut)
