"""EvidenceChain (mastracebench.txt appendix "EvidenceChain", eqs 11-14): hand-computed scores
with every edge case, the seeded generator, the parser and the prompt."""

from __future__ import annotations

import json

import pytest
from collablab.studies.mastracebench.tasks.base import Invalid, Task, is_invalid
from collablab.studies.mastracebench.tasks.evidence_chain import (
    EvidenceChainTask,
    EvidenceInstance,
    canonical_evidence,
    chain_score,
    evidence_prompt,
    generate_evidence,
    parse_evidence,
    score_evidence,
)

G = (1, 2, 3, 4)


@pytest.mark.parametrize("p, expected", [
    ((1, 2, 3, 4), 100.0),                                # gold
    ((4, 3, 2, 1), 50.0),                                 # F = 1, every pair reversed: O = 0
    ((1, 2), 100 * (2 / 3 + 1) / 2),                      # P 1, R 1/2, F 2/3, O 1
    ((1, 2, 9), 100 * (4 / 7 + 1) / 2),                   # P 2/3, R 1/2, F 4/7, O 1
    ((2, 1, 3), 100 * (6 / 7 + 2 / 3) / 2),               # F 6/7; pairs 21 x, 23 ok, 13 ok
    ((), 0.0),                                            # |P| = 0
    ((7, 8), 0.0),                                        # |H| = 0: F = 0, O = 0
    ((1,), 100 * (0.4 + 0) / 2),                          # |H| = 1 of 4: F 0.4, O 0
    ((1, 1, 2, 3, 4), 100.0),                             # P is a set (eq 11): the repeat adds nothing
    ((2, 1, 2), 100 * (2 / 3 + 0) / 2),                   # {1, 2}: P 1, R 1/2, F 2/3; first occurrences (2, 1): O 0
    ((1, 2, 2, 9), 100 * (4 / 7 + 1) / 2),                # {1, 2, 9}: P 2/3, R 1/2, F 4/7, O 1
])
def test_hand_computed_scores(p, expected):
    assert chain_score(p, G).score == pytest.approx(expected)


def test_a_repeated_fact_counts_once_in_the_set_precision():
    """Issue 28: eq 11's |P| is of the set P (the paper: "set-level precision and recall"). Gold
    (3, 1, 5, 6) and proposal (3, 3, 1): P = {3, 1}, Prec 1, Rec 1/2, F 2/3, O 1 -> 83.33 (counting
    the repeat gave Prec 2/3, F 4/7 and 78.57)."""
    s = chain_score((3, 3, 1), (3, 1, 5, 6))
    assert (s.precision, s.recall, s.order) == (1.0, 0.5, 1.0)
    assert round(s.score, 2) == 83.33


def test_components_of_a_partial_chain():
    s = chain_score((3, 1, 9, 4), G)
    assert s.precision == pytest.approx(3 / 4) and s.recall == pytest.approx(3 / 4)
    assert s.f_set == pytest.approx(3 / 4)
    assert s.order == pytest.approx(2 / 3)  # (3,1) x, (3,4) ok, (1,4) ok
    assert s.score == pytest.approx(100 * (3 / 4 + 2 / 3) / 2)


def test_single_fact_gold_chain():
    assert chain_score((5,), (5,)).score == 100.0           # |H| = |G| = 1: O = 1
    assert chain_score((5, 6), (5,)).score == pytest.approx(100 * (2 / 3 + 1) / 2)
    assert chain_score((6,), (5,)).score == 0.0


def tiny() -> EvidenceInstance:
    return EvidenceInstance(name="t", story="s", question="q?", answer="a",
                            facts=("f1", "f2", "f3", "f4", "f5", "f6"), chain=(1, 2, 3, 4),
                            distractors=(5, 6))


def test_unknown_ids_count_as_wrong_facts():
    inst = tiny()
    got = parse_evidence("[1, 2, 99]", inst)
    assert got == (1, 2, 99)
    assert score_evidence(got, inst) == pytest.approx(score_evidence((1, 2, 5), inst))


def test_task_interface():
    task, inst = EvidenceChainTask(), tiny()
    assert isinstance(task, Task)
    assert task.max_score(inst) == 100.0
    assert task.score(inst.chain, inst) == 100.0
    assert task.score(Invalid("no ids"), inst) == 0.0
    assert task.canonical((2, 1, 2)) == (2, 1, 2) and task.canonical([1, 2]) == (1, 2)
    assert canonical_evidence((1, 2)) != canonical_evidence((2, 1))
    assert task.parse('{"chain": [4, 3]}', inst) == (4, 3)


@pytest.mark.parametrize("kw, field", [
    ({"chain": (1, 1)}, "chain"), ({"chain": (1, 9)}, "chain"), ({"chain": ()}, "chain"),
    ({"distractors": (1,)}, "distractors"),
])
def test_bad_instances_name_the_field(kw, field):
    base = tiny().to_dict()
    base.update(kw)
    with pytest.raises(ValueError, match=field):
        EvidenceInstance.from_dict(base)


def test_missing_field_is_named():
    d = tiny().to_dict()
    del d["question"]
    with pytest.raises(ValueError, match="question"):
        EvidenceInstance.from_dict(d)


# --- generator -------------------------------------------------------------------------------

def test_generator_default_size_determinism_and_prefix():
    xs = generate_evidence()
    assert len(xs) == 100
    assert generate_evidence(100, 0) == xs
    assert generate_evidence(10, 0) == xs[:10]
    assert generate_evidence(10, 1) != xs[:10]


def test_generated_cases_are_well_formed():
    xs = generate_evidence(100, seed=3)
    assert {len(x.chain) for x in xs} == {3, 4, 5, 6}
    assert {len(x.distractors) for x in xs} == {3, 4, 5, 6}
    for x in xs:
        ids = set(range(1, len(x.facts) + 1))
        assert set(x.chain) | set(x.distractors) == ids and not set(x.chain) & set(x.distractors)
        assert len(set(x.facts)) == len(x.facts)
        assert score_evidence(x.chain, x) == 100.0
        assert "vanished" in x.facts[x.chain[0] - 1]          # the chain opens the case
        assert x.answer in x.facts[x.chain[-1] - 1]           # and ends at the culprit
        assert x.answer in x.story and x.question.startswith("Who took")
        assert EvidenceInstance.from_dict(json.loads(json.dumps(x.to_dict()))) == x
    assert len({x.chain for x in xs}) > 20  # numbering is shuffled


# --- parser ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, chain", [
    ('{"chain": [3, 1, 5]}', (3, 1, 5)),
    ('```json\n{"Evidence_Chain": ["F3", "fact 1", "#5"]}\n```', (3, 1, 5)),
    ('{"reasoning": "fact [2] matters", "fact_ids": [2, 4]}', (2, 4)),
    ('I first cite [2] then conclude.\n{"chain": [4, 1]}', (4, 1)),   # keyed object wins
    ('{"chain": [{"id": 2}, {"id": 5}]}', (2, 5)),
    ("[6, 2]", (6, 2)),
    ("Some thinking at 9 pm.\nChain: 3 -> 1 -> 5", (3, 1, 5)),
    ("**Final answer:** F2, F4, F1", (2, 4, 1)),
    ("1, 2\nfinal chain: 4 → 3", (4, 3)),                             # last line wins
    ("[]", ()),
])
def test_parse_accepts(text, chain):
    assert parse_evidence(text, tiny()) == chain


@pytest.mark.parametrize("text, why", [
    ("I think the butler did it at 9 pm.", "no evidence chain"),
    ('{"chain": ["the maid"]}', "not fact ids"),
    ("", "no evidence chain"),
])
def test_parse_rejects(text, why):
    got = parse_evidence(text, tiny())
    assert is_invalid(got) and why in got.reason
    assert score_evidence(got, tiny()) == 0.0


def test_parse_round_trip_of_gold():
    x = generate_evidence(1, seed=5)[0]
    assert parse_evidence(json.dumps({"chain": list(x.chain)}), x) == x.chain
    assert parse_evidence("Chain: " + " -> ".join(map(str, x.chain)), x) == x.chain


def test_prompt_lists_every_fact_and_the_format():
    x = generate_evidence(1, seed=2)[0]
    text = evidence_prompt(x)
    assert x.question in text and x.story in text
    for k, fact in enumerate(x.facts, start=1):
        assert f"[{k}] {fact}" in text
    assert all(w in text for w in ("complete", "minimal", "order"))
    assert parse_evidence(text.split("for example:")[1], x) == (4, 1, 7)
