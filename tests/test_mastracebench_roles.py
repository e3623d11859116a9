"""Reading the replies methods ask for (roles.py): verdicts, ratings, claims and claim votes out of
replies that hold more than one JSON object, fenced JSON, nested objects or braces in prose."""

from __future__ import annotations

import pytest

from collablab.studies.mastracebench.roles import parse_claim_votes, parse_claims, parse_rating, parse_verdict

FENCE = "```"


# -- two objects in one reply (a greedy {.*} span of both parses as neither)

def test_two_objects_in_one_reply_the_first_that_answers_wins():
    assert parse_verdict('{"approve": false} and some notes {"x": 1}') is False
    assert parse_verdict('{"x": 1}\n{"approve": true}') is True
    assert parse_rating('{"score": 3} then {"score": 9}') == 3.0
    assert parse_rating('{"note": "fine"} {"score": 7.5}') == 7.5
    assert parse_claims('{"claims": ["a", "b"]} {"claims": ["c"]}') == ["a", "b"]
    assert parse_claims('{"x": 1} {"claims": ["c"]}') == ["c"]
    shown = ["agent0-c0", "agent0-c1"]
    assert parse_claim_votes('{"endorse": ["agent0-c0"], "challenge": []} {"endorse": ["agent0-c1"]}', shown) \
        == ({"agent0-c0"}, set())
    assert parse_claim_votes('{"ok": true}\n{"challenge": ["agent0-c1"]}', shown) == (set(), {"agent0-c1"})


# -- an object inside a code fence

@pytest.mark.parametrize("lang", ["", "json"])
def test_an_object_inside_a_code_fence(lang):
    def fenced(body: str) -> str:
        return f"Here is my answer:\n{FENCE}{lang}\n{body}\n{FENCE}\nThanks."

    assert parse_verdict(fenced('{"approve": false, "feedback": "step 2 is wrong"}')) is False
    assert parse_rating(fenced('{"score": 6}')) == 6.0
    assert parse_claims(fenced('{"claims": ["fact 1 supports fact 4", "the chain has 3 steps"]}')) \
        == ["fact 1 supports fact 4", "the chain has 3 steps"]
    assert parse_claim_votes(fenced('{"endorse": ["a1"], "challenge": ["b1", "zz"]}'), ["a1", "b1"]) \
        == ({"a1"}, {"b1"})


# -- nested objects: the outer one first, then the ones inside it

def test_nested_objects():
    assert parse_verdict('{"review": {"approve": true}, "notes": {"len": 2}}') is True
    assert parse_verdict('{"approve": false, "detail": {"approve": true}}') is False  # outer first
    assert parse_rating('{"eval": {"score": 8, "why": {"k": 1}}}') == 8.0
    assert parse_rating('{"score": 12, "parts": {"score": 4}}') == 10.0  # clipped
    assert parse_claims('{"out": {"claims": ["x", {"nested": 1}]}}') == ["x", "{'nested': 1}"]
    assert parse_claim_votes('{"votes": {"endorse": ["a1"], "challenge": []}}', ["a1"]) == ({"a1"}, set())


# -- braces in prose around (or instead of) the object

def test_braces_in_prose():
    assert parse_verdict('The set {1, 2} is fine; my verdict: {"approve": false} (see {notes}).') is False
    assert parse_verdict("Sets like {a, b} look right; approved.") is True  # no JSON: the words decide
    assert parse_rating('Step 1 {uses} facts {2, 3}. Final: {"score": 7}') == 7.0
    assert parse_rating("Step {a} gets 4 of 10") == 4.0  # no JSON: the first number
    assert parse_claims('Claims {see below}: {"claims": ["one", "two"]} done {.}') == ["one", "two"]
    assert parse_claims("I {think}:\n- one\n- two") == ["one", "two"]
    assert parse_claim_votes('I {mostly} agree: {"endorse": ["a1"], "challenge": ["b1"]} {end}', ["a1", "b1"]) \
        == ({"a1"}, {"b1"})


def test_lists_and_broken_json_are_not_objects():
    assert parse_claims('["not", "an object"]\n- a\n- b') == ["a", "b"]
    assert parse_verdict('{"ok": tru') is None
    assert parse_rating('{"score": "high"} {"score": 5}') == 5.0
    assert parse_claim_votes('{"endorse": ["a1"', ["a1"]) == (set(), set())
    assert parse_claim_votes('{"endorse": "a1"}', ["a1"]) == (set(), set())
