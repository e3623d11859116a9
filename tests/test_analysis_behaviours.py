"""Keyword behaviour tagging (MECoBench §4.3, Table 2, Table 17) and its rules file."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from collablab.analysis import (BEHAVIOURS, behaviour_effects, behaviour_table, episode_behaviours, load_rules,
                                tag_messages, tag_text)

RULES_TEXT = resources.files("collablab.analysis").joinpath("behaviour_rules.yaml").read_text("utf-8")
RULES_DATA = yaml.safe_load(RULES_TEXT)


def _examples() -> list[Any]:
    """(rule column, example, should match) for every example in the YAML."""
    cases = []
    sections = [(n, s) for n, s in RULES_DATA["behaviours"].items()] + list(RULES_DATA["signals"].items())
    for name, spec in sections:
        specs = [(f"{name}-{sub}", s) for sub, s in spec["subtypes"].items()] if "subtypes" in spec else [(name, spec)]
        for col, s in specs:
            for ex in s.get("examples_match", []):
                cases.append(pytest.param(col, ex, True, id=f"{col}+{ex[:40]}"))
            for ex in s.get("examples_no_match", []):
                cases.append(pytest.param(col, ex, False, id=f"{col}-{ex[:40]}"))
    return cases


@pytest.mark.parametrize(("rule", "text", "expected"), _examples())
def test_rule_examples(rule: str, text: str, expected: bool) -> None:
    assert load_rules().rule(rule).matches(text) is expected


def test_every_rule_has_positive_and_near_miss_examples() -> None:
    rules = load_rules()
    for r in rules.rules:
        assert len(r.examples_match) >= 3, r.name
        assert len(r.examples_no_match) >= 3, r.name
    assert rules.behaviours == list(BEHAVIOURS)
    assert rules.version == RULES_DATA["version"]


# Each heuristic-policy template (with ids filled in) and the exact set of columns it must set.
TEMPLATES = {
    "I will grab the cupcake (21) and bring it to the coffeetable.": {"Info-Plan"},
    "I'll check the fridge in the kitchen for the juice.": {"Info-Plan"},
    "I am in the kitchen.": {"Info-Loc"},
    "I am at door 3.": {"Info-Loc"},
    "I see cupcake (21) on the kitchentable in the kitchen.": {"Info-Obj"},
    "I see juice (20) inside the fridge in the kitchen.": {"Info-Obj"},
    "Agent 1, please grab the apple (22) in the kitchen.": {"Act-Del"},
    "Agent 1, you handle the livingroom.": {"Task-Assign"},
    "Agent 1, are you at door 3 and ready to receive?": {"Coord-Q"},
    "Do you have the cupcake?": {"Coord-Q"},
    "I accidentally grabbed a plate instead of the cupcake. I will put it back.":
        {"Correct", "Correct-self", "Info-Plan"},
    "Agent 0, that is a plate, not the cupcake.": {"Correct", "Correct-peer"},
    "I could not find the cupcake on the kitchentable in the kitchen.": {"Neg-Report"},
    "There is no cupcake in the livingroom.": {"Neg-Report"},
    "I am stuck: my last actions failed.": {"Stuck"},
    "All items have been placed. The task is complete.": {"Completion-Claim"},
    "I am at door 3 with the juice (20). Please come to door 3 to receive it.": {"Info-Loc", "Act-Del"},
    "I am at door 3, ready to receive.": {"Info-Loc"},
    "Agent 1: grab the cupcake (21) from the kitchentable in the kitchen.": {"Act-Del"},
}


@pytest.mark.parametrize("text", list(TEMPLATES))
def test_heuristic_templates_get_exactly_their_behaviours(text: str) -> None:
    got = {k for k, v in tag_text(text).items() if v}
    assert got == TEMPLATES[text]


def test_matching_ignores_case_and_curly_quotes() -> None:
    assert tag_text("I’M IN THE KITCHEN.")["Info-Loc"]
    assert not any(tag_text("").values()) and not any(tag_text(None).values())


def _steps(rows: list[tuple[str, int, int, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["episode_id", "step", "agent", "message"]).assign(action="wait",
                                                                                        status="ok")


def test_tag_messages_one_row_per_message_and_records_version() -> None:
    steps = _steps([("e1", 0, 0, "I am in the kitchen."), ("e1", 0, 1, None), ("e1", 1, 0, "   "),
                    ("e1", 1, 1, "Do you have the cupcake?"), ("e2", 0, 0, np.nan)])
    t = tag_messages(steps)
    assert list(t["message"]) == ["I am in the kitchen.", "Do you have the cupcake?"]
    assert t["Info-Loc"].tolist() == [True, False] and t["Coord-Q"].tolist() == [False, True]
    assert (t["rules_version"] == load_rules().version).all()
    assert t.attrs["rules_version"] == load_rules().version
    assert t[list(BEHAVIOURS)].dtypes.eq(bool).all()


def test_episode_behaviours_any_message_and_empty_episodes() -> None:
    episodes = pd.DataFrame({"episode_id": ["e1", "e2", "e3"]})
    steps = _steps([("e1", 0, 0, "I am in the kitchen."), ("e1", 3, 1, "Agent 0, that is a plate, not the cupcake."),
                    ("e2", 0, 0, "I will grab the cupcake (21) and bring it to the coffeetable."),
                    ("e3", 0, 0, None)])
    eb = episode_behaviours(episodes, steps).set_index("episode_id")
    assert eb.loc["e1", "Info-Loc"] and eb.loc["e1", "Correct"] and eb.loc["e1", "Correct-peer"]
    assert not eb.loc["e1", "Correct-self"] and not eb.loc["e1", "Info-Plan"]
    assert eb.loc["e2", "Info-Plan"] and not eb.loc["e2", "Info-Loc"]
    assert not eb.loc["e3", list(BEHAVIOURS)].any()
    assert eb["n_messages"].tolist() == [2, 1, 0]
    assert (eb["rules_version"] == load_rules().version).all()


def _table_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    # parallel: Info-Plan in p1, p2 (both succeed); p3 succeeds, p4 fails -> Freq 50, ΔSR +50, ΔCR +25
    # sequential: Info-Plan in s1 (fails, cr .5); s2 succeeds -> Freq 50, ΔSR -100, ΔCR -50
    episodes = pd.DataFrame({
        "episode_id": ["p1", "p2", "p3", "p4", "s1", "s2"],
        "structure": ["parallel"] * 4 + ["sequential"] * 2,
        "success": [True, True, True, False, False, True],
        "cr": [1.0, 1.0, 1.0, 0.5, 0.5, 1.0],
        "backend": "heuristic",
    })
    plan = "I will grab the cupcake (21) and bring it to the coffeetable."
    steps = _steps([("p1", 0, 0, plan), ("p2", 2, 1, plan), ("p3", 0, 0, "I am in the kitchen."),
                    ("s1", 1, 0, plan), ("s2", 0, 0, None)])
    return episodes, steps


def test_behaviour_table_layout_and_values() -> None:
    episodes, steps = _table_data()
    t = behaviour_table(episodes, steps, by="structure")
    assert list(t.index) == list(BEHAVIOURS)
    assert t.loc["Info-Plan", ("parallel", "Freq. (%)")] == pytest.approx(50.0)
    assert t.loc["Info-Plan", ("parallel", "ΔSR (pp)")] == pytest.approx(50.0)
    assert t.loc["Info-Plan", ("parallel", "ΔCR (pp)")] == pytest.approx(25.0)
    assert t.loc["Info-Plan", ("sequential", "ΔSR (pp)")] == pytest.approx(-100.0)
    assert t.loc["Info-Plan", ("sequential", "ΔCR (pp)")] == pytest.approx(-50.0)
    assert t.loc["Info-Loc", ("parallel", "Freq. (%)")] == pytest.approx(25.0)
    assert t.loc["Info-Loc", ("sequential", "Freq. (%)")] == 0.0
    assert np.isnan(t.loc["Info-Loc", ("sequential", "ΔSR (pp)")])
    assert "sequential: behaviour never observed" in t.loc["Info-Loc", ("note", "")]
    assert t.attrs["rules_version"] == load_rules().version and t.attrs["backends"] == ["heuristic"]
    long = behaviour_effects(episodes, steps, "structure")
    assert set(long["rules_version"]) == {load_rules().version}
    assert {"delta_success_ci_low", "delta_cr_ci_high"} <= set(long.columns)


def test_behaviour_table_without_messages_says_so() -> None:
    episodes, steps = _table_data()
    t = behaviour_table(episodes, steps.assign(message=None), by="structure")
    assert (t.xs("Freq. (%)", axis=1, level=1) == 0).all().all()
    assert t.xs("ΔSR (pp)", axis=1, level=1).isna().all().all()
    assert all("no messages in any episode" in n for n in t[("note", "")])
    assert "no agent messages" in t.attrs["note"]
    # steps without a message column at all, and no steps
    t2 = behaviour_table(episodes, steps.drop(columns="message"), by=None)
    assert list(t2.columns.get_level_values(0).unique()) == ["all", "note"]
    assert not episode_behaviours(episodes, pd.DataFrame())[list(BEHAVIOURS)].any().any()


def test_single_episode_table() -> None:
    episodes, steps = _table_data()
    t = behaviour_table(episodes.iloc[:1], steps, by="structure")
    assert t.loc["Info-Plan", ("parallel", "Freq. (%)")] == 100.0
    assert "present in every episode" in t.loc["Info-Plan", ("note", "")]


def test_custom_rules_file_and_bad_regex(tmp_path: Any) -> None:
    good = {"version": "t-1", "behaviours": {"Hello": {"patterns": ["\\bhello\\b"]}}}
    p = tmp_path / "rules.yaml"
    p.write_text(yaml.safe_dump(good))
    rules = load_rules(p)
    t = tag_messages(_steps([("e", 0, 0, "Hello there"), ("e", 1, 0, "bye")]), rules)
    assert t["Hello"].tolist() == [True, False] and set(t["rules_version"]) == {"t-1"}
    bad = {"version": "t-2", "behaviours": {"Broken": {"patterns": ["(unclosed"]}}}
    p2 = tmp_path / "bad.yaml"
    p2.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="Broken.*patterns\\[0\\]"):
        load_rules(p2)
