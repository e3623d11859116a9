"""OptionGen (tasks/option_gen.py): the RACE loader on both layouts and bad inputs, the parser,
the canonical form, the offline rule judge's anchored intervals (hand-checked), eq 10,
memoised judge calls recorded as ``score_judge`` and kept out of TC, the LLM judge against the
fake OpenAI server (replay, unreadable replies, dead servers), rubric files, the offline kit,
and every method on one item with the heuristic backend.

The passages under tests/data/race_sample/ were written for these tests (RACE itself cannot be
shipped): ``RACE/test/{high,middle}/*.txt`` in the original release's layout and the same four
questions as an HF-style ``race_hf.jsonl``.
"""

from __future__ import annotations

import inspect
import json
import random
import re
from pathlib import Path

import pytest

from collablab.llm import EndpointError, EndpointSpec, LLMClient, LLMResult, ResponseCache, Usage
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.mastracebench import methods as M
from collablab.studies.mastracebench import metrics as X
from collablab.studies.mastracebench import offline as O
from collablab.studies.mastracebench.llm_backend import LLMBackend
from collablab.studies.mastracebench.tasks import TASKS, Invalid, Task, is_invalid
from collablab.studies.mastracebench.tasks import option_gen as OG
from collablab.studies.mastracebench.trajectory import Trajectory, canonical_json, parse_call_id, validate_trajectory

DATA = Path(__file__).resolve().parent / "data" / "race_sample"
TREE, JSONL = DATA / "RACE", DATA / "race_hf.jsonl"
ITEMS = OG.read_race(TREE)
BY_ID = {it.id: it for it in ITEMS}
BATS = BY_ID["high0002-q0"]


def reference(item: OG.OptionGenItem) -> OG.OptionSet:
    return OG.OptionSet(item.correct, item.distractors)


# ------------------------------------------------------------------ loader

def test_both_layouts_give_the_same_items_one_per_question():
    hf = OG.read_race(JSONL)
    assert [it.id for it in ITEMS] == ["high0001-q0", "high0001-q1", "high0002-q0", "middle0001-q0"]
    assert hf == ITEMS
    assert BATS.answer == "B" and BATS.correct == "Bats eat insects that harm crops."
    assert BATS.distractors == ("Bats help flowers grow at night.", "Bats scare away birds that eat seeds.",
                                "Bats are the only mammals that fly.")
    assert BY_ID["high0001-q1"].question == "What is the best title for the passage?"
    assert OG.OptionGenItem.from_dict(BATS.to_dict()) == BATS


def test_selection_is_seeded_layout_independent_and_takes_all_when_short():
    a = OG.load_race(TREE, n=2, seed=0)
    assert [it.id for it in a] == [it.id for it in OG.load_race(JSONL, n=2, seed=0)]
    assert a == OG.load_race(TREE, n=2, seed=0) and len(a) == 2
    shuffled = list(ITEMS)
    random.Random(3).shuffle(shuffled)
    assert OG.select_items(shuffled, 2, 0) == a  # depends on ids and seed, not on file order
    assert sorted(it.id for it in OG.load_race(TREE)) == sorted(BY_ID)  # 235 asked, 4 there: all of them
    orders = {tuple(it.id for it in OG.select_items(ITEMS, 4, s)) for s in range(6)}
    assert len(orders) > 1  # the seed matters
    with pytest.raises(ValueError, match="n: a positive integer"):
        OG.select_items(ITEMS, 0)


def test_json_exports_single_article_files_and_the_env_variable(tmp_path, monkeypatch):
    rows = [json.loads(line) for line in JSONL.read_text().splitlines()]
    (tmp_path / "list.json").write_text(json.dumps(rows))
    (tmp_path / "data.json").write_text(json.dumps({"data": rows}))
    assert OG.read_race(tmp_path / "list.json") == ITEMS == OG.read_race(tmp_path / "data.json")
    single = tmp_path / "high0002.json"
    single.write_text((TREE / "test" / "high" / "high0002.txt").read_text())
    assert OG.read_race(single) == [BATS]
    monkeypatch.setenv(OG.RACE_ENV, str(JSONL))
    assert OG.read_race() == ITEMS


def test_the_same_article_stem_in_two_files_is_told_apart(tmp_path):
    for split in ("dev", "test"):
        (tmp_path / split).mkdir()
        (tmp_path / split / "high0002.txt").write_text((TREE / "test" / "high" / "high0002.txt").read_text())
    assert [it.id for it in OG.read_race(tmp_path)] == ["high0002-q0", "high0002-q0@test/high0002"]


def test_parquet_needs_pyarrow_or_reads_it(tmp_path):
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        bad = tmp_path / "race.parquet"
        bad.write_bytes(b"PAR1 not really")
        with pytest.raises(ValueError, match=r"race\.parquet: reading parquet needs pyarrow"):
            OG.read_race(bad)
        return
    rows = [json.loads(line) for line in JSONL.read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "race.parquet")
    assert OG.read_race(tmp_path / "race.parquet") == ITEMS


def test_a_missing_path_says_race_cannot_be_shipped(tmp_path, monkeypatch):
    monkeypatch.delenv(OG.RACE_ENV, raising=False)
    with pytest.raises(FileNotFoundError, match=r"no such file.*RACE cannot be shipped.*load_race\("):
        OG.read_race(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match=f"no RACE path given.*{OG.RACE_ENV}"):
        OG.load_race()


def _article(**changes) -> dict:
    d = json.loads((TREE / "test" / "high" / "high0002.txt").read_text())
    d.update(changes)
    return d


@pytest.mark.parametrize("record, match", [
    ({k: v for k, v in _article().items() if k != "answers"}, r"bad\.txt: field 'answers' is missing"),
    (_article(options=[["a", "b", "c"]]), r"bad\.txt: question 0: field 'options' must be a list of 4 strings"),
    (_article(answers=["E"]), r"bad\.txt: question 0: field 'answers' must be one of A, B, C, D, got 'E'"),
    (_article(questions=["q1", "q2"]), r"bad\.txt: fields 'questions', 'options', 'answers' must have equal"),
    (_article(article=""), r"bad\.txt: field 'article' must be a non-empty string"),
    (_article(options="abcd"), r"bad\.txt: field 'options' must be a list"),
    ({"title": "x"}, r"bad\.txt: neither a RACE article"),
])
def test_bad_article_files_name_the_file_and_field(tmp_path, record, match):
    (tmp_path / "bad.txt").write_text(json.dumps(record))
    with pytest.raises(ValueError, match=match):
        OG.read_race(tmp_path)


def test_bad_jsonl_and_other_files_name_the_line_and_field(tmp_path):
    rows = [json.loads(line) for line in JSONL.read_text().splitlines()]
    del rows[1]["example_id"]
    f = tmp_path / "x.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(ValueError, match=r"x\.jsonl: line 2: field 'example_id' is missing"):
        OG.read_race(f)
    f.write_text("{not json\n")
    with pytest.raises(ValueError, match=r"x\.jsonl: line 1: not JSON"):
        OG.read_race(f)
    rows = [json.loads(line) for line in JSONL.read_text().splitlines()]
    rows[2]["answer"] = 2
    f.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(ValueError, match=r"line 3: field 'answer' must be one of A, B, C, D, got 2"):
        OG.read_race(f)
    (tmp_path / "notes.txt").write_text("just prose")
    with pytest.raises(ValueError, match=r"notes\.txt: not JSON"):
        OG.read_race(tmp_path / "notes.txt")
    (tmp_path / "a.csv").write_text("x")
    with pytest.raises(ValueError, match=r"a\.csv: not a RACE file"):
        OG.read_race(tmp_path / "a.csv")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no RACE questions found"):
        OG.read_race(empty)


# ------------------------------------------------------------------ prompt, parser, canonical form

def test_the_prompt_shows_article_and_question_only():
    for it in ITEMS:
        p = OG.option_gen_prompt(it)
        assert it.article in p and it.question in p and '"distractors"' in p
        assert not any(o.rstrip(".") in p for o in it.options)  # the reference options are withheld
    assert M.PROMPTS["option_gen"] is OG.option_gen_prompt and TASKS["option_gen"] is OG.OptionGenTask


GOOD = OG.OptionSet("Bats eat insects that harm crops.", ("Bats help flowers grow.", "Bats are blind.", "Bats fly."))


@pytest.mark.parametrize("text", [
    json.dumps(GOOD.to_dict()),
    "Here you go:\n```json\n" + json.dumps(GOOD.to_dict(), indent=2) + "\n```\nDone.",
    'draft {"correct": "x", "distractors": ["a", "b", "c"]} final ' + json.dumps(GOOD.to_dict()),
    json.dumps({"Correct Option": GOOD.correct, "wrong_options": list(GOOD.distractors)}),
    json.dumps({"options": ["Bats help flowers grow.", "B. Bats eat insects that harm crops.", "Bats are blind.",
                            "Bats fly."], "answer": "b"}),
    json.dumps({"correct": "A. " + GOOD.correct, "distractors": ["(b) Bats help flowers grow.", "C) Bats are blind.",
                                                                 "Bats fly."]}),
    "**Correct:** Bats eat insects that harm crops.\nDistractor 1: Bats help flowers grow.\n"
    "Distractor 2: Bats are blind.\nDistractor 3: Bats fly.",
    "Correct option: Bats eat insects that harm crops.\nDistractors:\n- Bats help flowers grow.\n"
    "2) Bats are blind.\n* Bats fly.\n\nThat is all.",
])
def test_parser_reads_the_accepted_formats(text):
    assert OG.parse_options(text) == GOOD


@pytest.mark.parametrize("text, reason", [
    ('{"correct": "x", "distractors": ["a", "b"]}', "exactly 3 are required, got 2"),
    ('{"correct": "x", "distractors": ["a", "b", "c", "d"]}', "exactly 3 are required, got 4"),
    ('{"correct": "x", "distractors": ["a", "  ", "c"]}', "distractor 2 is empty"),
    ('{"correct": "", "distractors": ["a", "b", "c"]}', "the correct option is empty"),
    ('{"distractors": ["a", "b", "c"]}', "no correct option"),
    ('{"correct": "x"}', "no distractors"),
    ('{"correct": "x", "distractors": "a, b, c"}', "must be a list"),
    ('{"correct": ["x"], "distractors": ["a", "b", "c"]}', "correct: must be text"),
    ('{"correct": "x", "distractors": ["a", null, "c"]}', "every distractor must be text"),
    ("I would rather not.", "no option set found"),
    ("Correct: x\nDistractor: a", "exactly 3 are required, got 1"),
])
def test_parser_rejects_incomplete_sets_with_a_reason(text, reason):
    got = OG.parse_options(text)
    assert is_invalid(got) and reason in got.reason


def test_duplicates_and_numbers_are_readable_and_left_to_the_judge():
    assert OG.parse_options('{"correct": 1990, "distractors": [1980, "1980", 2000]}') == \
        OG.OptionSet("1990", ("1980", "1980", "2000"))
    dup = OG.parse_options('{"correct": "x", "distractors": ["x", "x", "y"]}')
    assert not is_invalid(dup) and dup.distractors == ("x", "x", "y")


def test_canonical_form_ignores_case_spacing_final_punctuation_and_distractor_order():
    task = OG.OptionGenTask()
    a = task.parse(json.dumps(GOOD.to_dict()), BATS)
    b = task.parse('{"correct": "  bats EAT insects that harm crops ", "distractors": '
                   '["\\"Bats fly!\\"", "bats are   blind", "Bats help flowers grow;"]}', BATS)
    assert task.canonical(a) == task.canonical(b) == (
        "bats eat insects that harm crops", ("bats are blind", "bats fly", "bats help flowers grow"))
    hash(task.canonical(a))
    assert canonical_json(task.canonical(a)) == ["bats eat insects that harm crops",
                                                 ["bats are blind", "bats fly", "bats help flowers grow"]]
    assert task.canonical(Invalid("x")) == Invalid("x")
    assert OG.normalize_option("\u201cTom\u2019s   DOG.\u201d") == "tom's dog"


# ------------------------------------------------------------------ the rule judge (hand-checked)

def _in(anchors, k, score):
    lo, hi, _ = anchors[k]
    return lo <= score <= hi


def test_anchors_are_six_contiguous_intervals_written_into_the_judge_prompt():
    for anchors in (OG.CORRECT_ANCHORS, OG.DISTRACTOR_ANCHORS):
        assert len(anchors) == 6 and anchors[0][1] == 100 and anchors[-1][0] == 0
        assert all(a[0] == b[1] + 1 for a, b in zip(anchors, anchors[1:]))
    prompt = OG.judge_prompt(BATS, OG.offline_rubric(BATS), reference(BATS))
    assert len(re.findall(r"^\s+\d+-\d+: ", prompt, re.MULTILINE)) == 12
    assert '"correct_score"' in prompt and '"distractor_score"' in prompt and OG.offline_rubric(BATS).correct in prompt


def test_the_reference_set_scores_100_on_every_item():
    for it in ITEMS:
        assert OG.rule_scores(reference(it), it) == (100.0, 100.0)


def test_rule_judge_hand_checked_cases():
    d0, d1, d2 = BATS.distractors
    # promoted distractor: s_cor copies d0 (F1 1 >= 0.85, answer F1 0.2) -> 0-19 at t = 0 -> 0;
    # s_dis: a distractor is the answer -> fatal 0-19, 1 of 3 flawed -> t = 2/3 -> round(12.67) = 13
    c, d = OG.rule_scores(OG.OptionSet(d0, (BATS.correct, d1, d2)), BATS)
    assert (c, d) == (0.0, 13.0) and _in(OG.CORRECT_ANCHORS, 5, c) and _in(OG.DISTRACTOR_ANCHORS, 5, d)
    # an exact duplicate pair: 2 flawed + identical -> 20-39, plausibility 1 -> 39
    assert OG.rule_scores(OG.OptionSet(BATS.correct, (d0, d0, d2)), BATS) == (100.0, 39.0)
    # a paraphrase of another distractor (same content words): 2 flawed -> 40-59 -> 59
    assert OG.rule_scores(OG.OptionSet(BATS.correct, (d0, "Indeed, bats help flowers grow at night.", d2)),
                          BATS) == (100.0, 59.0)
    # an off-topic distractor: 1 flawed -> 60-74, plausibility 2/3 -> round(69.33) = 69
    assert OG.rule_scores(OG.OptionSet(BATS.correct, (d0, "Penguins can be trained to play the violin.", d2)),
                          BATS) == (100.0, 69.0)
    # a shorter correct option: answer F1 = 2*3/8 = 0.75 -> 75-89 at t = 0.75 -> round(85.5) = 86
    assert OG.rule_scores(OG.OptionSet("Bats eat insects.", BATS.distractors), BATS)[0] == 86.0
    # a related wrong answer, closer to a distractor (F1 0.5) than to the answer (0.25): q = 0.05,
    # supported by the article -> 20-39 at t = 0.25 -> round(24.75) = 25
    assert OG.rule_scores(OG.OptionSet("Bats are blind at night.", BATS.distractors), BATS)[0] == 25.0
    # an unrelated answer: q = 0 and unsupported -> 0-19 at t = 0
    assert OG.rule_scores(OG.OptionSet("Penguins can be trained to play the violin.", BATS.distractors),
                          BATS)[0] == 0.0
    # reworded: word order and stop words do not count, "eaten" is not "eat": F1 = 8/10 = 0.8 -> 90
    assert OG.rule_scores(OG.OptionSet("Insects that harm the crops are eaten by bats", BATS.distractors),
                          BATS)[0] == 90.0


def test_new_plausible_distractors_score_in_the_upper_intervals():
    new = OG.OptionSet(BATS.correct, ("Bats sleep in the crops at night.", "Farmers use bats to find echoes.",
                                      "Bats cannot see at all."))
    c, d = OG.rule_scores(new, BATS)
    assert c == 100.0 and (_in(OG.DISTRACTOR_ANCHORS, 0, d) or _in(OG.DISTRACTOR_ANCHORS, 1, d))
    correct_as_distractor = OG.OptionSet(BATS.correct, ("Bats eat insects that harm crops!", "Bats fly.", "Bats see."))
    assert _in(OG.DISTRACTOR_ANCHORS, 5, OG.rule_scores(correct_as_distractor, BATS)[1])
    same = OG.OptionSet(BATS.correct, ("Bats fly.", "bats fly", "BATS FLY"))
    assert _in(OG.DISTRACTOR_ANCHORS, 5, OG.rule_scores(same, BATS)[1])


def test_eq_10_is_the_mean_of_the_two_scores():
    assert OG.option_gen_score(80, 60) == 70.0
    assert OG.Verdict(90.0, 40.0).score == 65.0
    task = OG.OptionGenTask(judge=OG.RuleJudge())
    p = OG.OptionSet(BATS.correct, (BATS.distractors[0], "Penguins can be trained to play the violin.",
                                    BATS.distractors[2]))
    assert task.score(p, BATS) == (100.0 + 69.0) / 2


# ------------------------------------------------------------------ the task: judge, memo, recorded calls

class CountingJudge(OG.RuleJudge):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, OG.OptionSet]] = []

    def judge(self, proposal, item, call_id):
        self.seen.append((item.id, proposal))
        return super().judge(proposal, item, call_id)


def test_the_task_parses_without_a_judge_but_needs_one_to_score():
    task = OG.OptionGenTask()
    assert isinstance(task, Task) and task.name == "option_gen" and task.max_score(BATS) == 100.0
    p = task.parse(json.dumps(GOOD.to_dict()), BATS)
    with pytest.raises(ValueError, match="judge: OptionGen scoring needs a judge"):
        task.score(p, BATS)
    assert task.score(Invalid("x"), BATS) == 0.0 and task.scorer_info() is None


def test_identical_proposals_cost_one_judge_call_and_calls_are_taken_once():
    judge = CountingJudge()
    task = OG.OptionGenTask(judge=judge)
    a = OG.OptionSet("Bats eat insects.", ("Bats fly.", "Bats are blind.", "Bats sing."))
    b = OG.OptionSet("bats eat insects", ("Bats sing!", "bats fly", "Bats are blind."))
    s = task.score(a, BATS)
    assert task.score(b, BATS) == s and len(judge.seen) == 1
    assert judge.seen[0][1] == OG.OptionSet("bats eat insects", ("bats are blind", "bats fly", "bats sing"))
    task.score(a, BY_ID["middle0001-q0"])  # another instance: another call
    assert task.score(Invalid("x"), BATS) == 0.0 and len(judge.seen) == 2
    calls = task.take_scoring_calls()
    assert [c.kind for c in calls] == ["score_judge", "score_judge"] and task.take_scoring_calls() == []
    assert calls[0].call_id == OG.OptionGenTask.judge_call_id(BATS, task.canonical(a))
    assert calls[0].role == "score_judge" and calls[0].agent.startswith("judge-") and not calls[0].counts_for_tc
    assert calls[0].input_tokens > 0 and calls[0].agent != calls[1].agent
    assert task.verdict(b, BATS).reason == "" and task.take_scoring_calls() == []  # memoised: no new call
    info = task.scorer_info()
    assert info == {"task": "option_gen", "judge": "rule", "model": "rule", "prompt_version": "optiongen-rules-v1",
                    "temperature": 0.0, "rubrics": OG.OFFLINE_RUBRIC_VERSION}


@pytest.mark.parametrize("method", list(M.METHODS))
def test_every_method_runs_on_an_optiongen_item_offline(method):
    task = OG.OptionGenTask(judge=OG.RuleJudge())
    item = BY_ID["high0001-q0"]
    t = M.run(method, task, item, item.id, O.HeuristicBackend("medium", seed=2))
    d = t.to_dict()
    validate_trajectory(d)
    assert Trajectory.from_dict(d) == t and t.task == "option_gen" and t.s_star == 100.0
    assert d["scorer"]["judge"] == "rule" and d["scorer"]["rubrics"] == OG.OFFLINE_RUBRIC_VERSION
    judged = [c for c in t.calls if c.kind == "score_judge"]
    graded = [p for tr in t.proposers for p in (tr.initial, tr.final)] + [t.answer]
    if any(p.valid for p in graded):
        assert judged  # a fresh task: the unit's first valid proposal needed the judge
    distinct = {json.dumps(p.canonical) for p in graded if p.valid}
    assert len(judged) <= len(distinct) + 2  # memoised (MAS-GPT's program may grade unrecorded drafts)
    for c in judged:
        parsed = parse_call_id(c.call_id)
        assert parsed[0] == method and parsed[4] == "score_judge"
    assert X.token_cost(t) == sum(c.tokens for c in t.calls if c.kind == "agent")
    if judged:
        assert X.token_cost(t) < sum(c.tokens for c in t.calls)
    assert task.take_scoring_calls() == []  # all of them went into the trajectory


def test_a_task_shared_by_units_judges_a_repeated_proposal_once():
    task = OG.OptionGenTask(judge=CountingJudge())
    item = BY_ID["high0001-q1"]
    be = O.HeuristicBackend("strong", seed=0)
    t1 = M.run("Single-Agent", task, item, item.id, be)
    t2 = M.run("Consistency", task, item, item.id, be)
    n1 = sum(c.kind == "score_judge" for c in t1.calls)
    n2 = sum(c.kind == "score_judge" for c in t2.calls)
    assert n1 == 1 and n1 + n2 == len(task.judge.seen)


def test_judge_calls_made_outside_a_unit_are_not_put_into_one():
    task = OG.OptionGenTask(judge=OG.RuleJudge())
    item = BY_ID["middle0001-q0"]
    task.score(OG.OptionSet("x", ("a", "b", "c")), item)  # scored by hand, before any unit
    t = M.run("Single-Agent", task, item, item.id, O.HeuristicBackend("strong", seed=0))
    stale = "judge-" + OG.OptionGenTask.judge_call_id(item, ("x", ("a", "b", "c"))).rsplit("/", 1)[1]
    assert stale not in {c.agent for c in t.calls}


def test_other_tasks_records_have_no_scorer():
    from collablab.studies.mastracebench.tasks import EvidenceChainTask, generate_evidence

    inst = generate_evidence(1)[0]
    t = M.run("Single-Agent", EvidenceChainTask(), inst, inst.name, O.HeuristicBackend())
    assert t.scorer is None and "scorer" not in t.to_dict()


# ------------------------------------------------------------------ the offline kit

def test_offline_kit_best_degrade_refine_and_render():
    kit = O.KITS["option_gen"]
    task = OG.OptionGenTask()
    for it in ITEMS:
        best = kit.best(it, random.Random(0))
        assert kit.value(best, it) == kit.top(it) == 100.0
        assert task.parse(kit.render(best, it), it) == best
        for k in range(8):
            worse = kit.degrade(best, it, random.Random(k))
            assert kit.value(worse, it) < 100.0
            assert task.parse(kit.render(worse, it), it) == worse
            cur, steps = worse, 0
            while task.canonical(cur) != task.canonical(best):
                nxt = kit.refine(cur, best, it, random.Random(k))
                assert kit.value(nxt, it) >= kit.value(cur, it)
                cur, steps = nxt, steps + 1
                assert steps <= 4
        assert kit.refine(Invalid("x"), best, it, random.Random(0)) == best


def test_degradations_cover_the_documented_variants():
    kit = O.KITS["option_gen"]
    best = kit.best(BATS, random.Random(0))
    seen = set()
    for k in range(40):
        w = kit.degrade(best, BATS, random.Random(k))
        if w.correct in BATS.distractors:
            seen.add("promote")
        elif len({OG.normalize_option(d) for d in w.distractors}) < 3:
            seen.add("duplicate")
        elif any(d.startswith("Indeed, ") for d in w.distractors):
            seen.add("paraphrase")
        else:
            seen.add("off_topic")
    assert seen == {"promote", "duplicate", "paraphrase", "off_topic"}


# ------------------------------------------------------------------ the LLM judge (fake server)

JUDGE_REPLY = '{"correct_score": 90, "distractor_score": 70}'
RUBRIC_REPLY = json.dumps({"correct_rubric": "Must say that bats eat crop pests.",
                           "distractor_rubric": ["Plausible: bat facts.", "Wrong: not why farmers like bats."]})


def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
    text = body["messages"][-1]["content"]
    if text.startswith("You grade answer options"):
        reply = JUDGE_REPLY
    elif text.startswith("You prepare the scoring criteria"):
        reply = RUBRIC_REPLY
    else:
        reply = json.dumps(GOOD.to_dict())
    return FakeReply(reply, usage={"prompt_tokens": len(text.split()), "completion_tokens": 5,
                                   "total_tokens": len(text.split()) + 5})


def client(url: str, tmp_path, mode: str, attempts: int = 4) -> LLMClient:
    spec = EndpointSpec(alias="fake", model="fake-model", base_url=url, api_key_env=None, max_attempts=attempts,
                        backoff_base_s=0.01, backoff_max_s=0.02)
    return LLMClient(spec, ResponseCache(tmp_path / "cache.sqlite", mode))


def test_llm_judge_scores_records_and_replays(tmp_path):
    with FakeOpenAIServer(handler) as srv:
        be = LLMBackend(client(srv.base_url, tmp_path, "rw"))
        task = OG.OptionGenTask(judge=OG.judge_for(be))
        live = M.run("Single-Agent", task, BATS, BATS.id, be)
        bodies = list(srv.bodies)
    assert live.answer.score == 80.0 and live.answer.valid
    judged = [c for c in live.calls if c.kind == "score_judge"]
    assert len(judged) == 1 and judged[0].output_tokens == 5 and judged[0].input_tokens > 0
    assert X.token_cost(live) == sum(c.tokens for c in live.calls if c.kind == "agent")
    assert live.scorer == {"task": "option_gen", "judge": "llm", "model": "fake-model",
                           "prompt_version": OG.PROMPT_VERSION, "temperature": 0.0,
                           "rubrics": f"llm:fake-model:{OG.RUBRIC_PROMPT_VERSION}"}
    temps = {b["messages"][-1]["content"].split("\n", 1)[0]: b.get("temperature") for b in bodies}
    assert temps["You grade answer options written for a multiple-choice reading-comprehension question."] == 0
    assert temps["You prepare the scoring criteria for one multiple-choice reading-comprehension item."] == 0
    judge_text = next(b["messages"][-1]["content"] for b in bodies
                      if b["messages"][-1]["content"].startswith("You grade"))
    assert "Must say that bats eat crop pests." in judge_text and "- Wrong: not why farmers like bats." in judge_text
    validate_trajectory(live.to_dict())
    # the server is gone: MAS calls, rubric and judge replay from the cache by logical id
    be2 = LLMBackend(client("http://127.0.0.1:9/v1", tmp_path, "replay"))
    again = M.run("Single-Agent", OG.OptionGenTask(judge=OG.judge_for(be2)), BATS, BATS.id, be2)
    assert again.to_dict() == live.to_dict()


# Issue 23 replaced test_an_unreadable_judge_reply_scores_zero_without_retry, which encoded the old
# behaviour (an unreadable verdict scored 0/0 with one ask): it is now re-asked, then JudgeError.

def _judge_text(body: dict) -> str:
    return str(body["messages"][0]["content"])


def test_a_garbage_verdict_is_asked_again_until_one_is_read(tmp_path):
    def garbage_twice(body: dict, server: FakeOpenAIServer) -> FakeReply:
        n = server.count("judge")  # this ask's number
        return FakeReply("I think it is quite good, maybe 8/10." if n <= 2 else JUDGE_REPLY,
                         usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110})

    with FakeOpenAIServer(garbage_twice) as srv:
        task = OG.OptionGenTask(judge=OG.LLMJudge(client(srv.base_url, tmp_path, "rw")))
        assert task.score(GOOD, BATS) == 80.0  # eq 10: (90 + 70) / 2
        bodies = list(srv.bodies)
    assert len(bodies) == 3
    v = task.verdict(GOOD, BATS)
    assert (v.correct_score, v.distractor_score, v.asks) == (90.0, 70.0, 3)
    assert v.reason.startswith("read on ask 3 (ask 1: no JSON object") and (v.input_tokens, v.output_tokens) == (300, 30)
    assert [c.kind for c in task.take_scoring_calls()] == ["score_judge"]
    # every ask: temperature 0, the judge's budget; a re-ask appends the reply and the format reminder
    assert all(b["temperature"] == 0 and b["max_tokens"] == OG.JUDGE_MAX_TOKENS == 4096 for b in bodies)
    assert [len(b["messages"]) for b in bodies] == [1, 3, 3]
    assert bodies[1]["messages"][1] == {"role": "assistant", "content": "I think it is quite good, maybe 8/10."}
    assert "Answer in the required format" in bodies[2]["messages"][2]["content"]
    if "thinking" in inspect.signature(LLMClient.chat).parameters:  # the floor's switch has landed
        assert all(b["chat_template_kwargs"]["enable_thinking"] is False for b in bodies)
    # replay: the three asks come back from the cache by (call id, attempt)
    again = OG.OptionGenTask(judge=OG.LLMJudge(client("http://127.0.0.1:9/v1", tmp_path, "replay")))
    assert again.verdict(GOOD, BATS) == v


def test_a_judge_that_never_answers_in_format_raises_judge_error(tmp_path):
    with FakeOpenAIServer(lambda b, s: FakeReply("Sure! " + "The options look fine. " * 30)) as srv:
        task = OG.OptionGenTask(judge=OG.LLMJudge(client(srv.base_url, tmp_path, "off")))
        with pytest.raises(OG.JudgeError, match=r"no readable verdict on item high0002-q0 after 3 ask\(s\)") as e:
            task.score(GOOD, BATS)
        assert srv.n_requests == 1 + OG.JUDGE_REASKS == 3
    assert e.value.item == BATS.id and e.value.reply == ("Sure! " + "The options look fine. " * 30)[:200]
    assert "last reply begins 'Sure! The options look fine." in str(e.value)
    assert task.take_scoring_calls() == []  # never a silent 0/0: nothing scored, nothing memoised


def test_a_reply_cut_at_the_token_budget_is_unreadable_even_with_a_verdict_in_it(tmp_path):
    replies = iter([FakeReply(JUDGE_REPLY, finish_reason="length"), FakeReply('{"correct_score": 60, "distractor_score": 40}')])
    with FakeOpenAIServer(lambda b, s: next(replies)) as srv:
        v = OG.LLMJudge(client(srv.base_url, tmp_path, "off")).judge(GOOD, BATS, "j")
    assert (v.correct_score, v.distractor_score, v.asks) == (60.0, 40.0, 2) and "cut at the token budget" in v.reason


class FakeClient:
    """A client without a server: ``chat_sync(messages, **kwargs)`` gives scripted LLMResults."""

    endpoint = type("E", (), {"model": "fake-judge"})()

    def __init__(self, replies):
        self.replies, self.calls = list(replies), []

    def chat_sync(self, messages, **kwargs):
        self.calls.append((messages, kwargs))
        text, finish = self.replies.pop(0)
        return LLMResult(text=text, usage=Usage(7, 3, 10), latency_s=0.0, cache="off", attempts=1, error=None,
                         model="fake-judge", endpoint="fake", call_id=kwargs["call_id"], finish_reason=finish)


def test_the_judge_asks_with_thinking_off_temperature_0_and_distinct_attempts():
    fake = FakeClient([("nope", "stop"), ('{"correct_score": 90', "length"), (JUDGE_REPLY, "stop")])
    v = OG.LLMJudge(fake).judge(GOOD, BATS, "mastracebench/option_gen/judge/x")
    assert (v.score, v.asks, v.input_tokens, v.output_tokens) == (80.0, 3, 21, 9)
    kws = [kw for _, kw in fake.calls]
    assert [kw["attempt"] for kw in kws] == [0, 1, 2]
    for kw in kws:
        assert kw["thinking"] == "off" and kw["temperature"] == 0.0 and kw["max_tokens"] == 4096
        assert kw["call_id"] == "mastracebench/option_gen/judge/x" and kw["sample_index"] == 0
    assert isinstance(fake.calls[0][0], str) and fake.calls[2][0][1]["content"] == '{"correct_score": 90'
    with pytest.raises(OG.JudgeError):
        OG.LLMJudge(FakeClient([("x", "stop")] * 3)).judge(GOOD, BATS, "c")
    one = FakeClient([("x", "stop")])
    with pytest.raises(OG.JudgeError, match="after 1 ask"):
        OG.LLMJudge(one, reasks=0).judge(GOOD, BATS, "c")


@pytest.mark.parametrize("reply, expect", [
    ('{"correct_score": 85, "distractor_score": "60"}', (85.0, 60.0)),
    ('Reasoning... {"correct_score": 10, "distractor_score": 20} then {"correct_score": 95, "distractor_score": 75.5}',
     (95.0, 75.5)),
    ('{"correct_score": 120, "distractor_score": 60}', "numbers in [0, 100]"),
    ('{"correct_score": true, "distractor_score": 60}', "numbers in [0, 100]"),
    ('{"score": 80}', "no JSON object"),
])
def test_parse_judge_reply(reply, expect):
    got = OG.parse_judge_reply(reply)
    assert got == expect if isinstance(expect, tuple) else (isinstance(got, str) and expect in got)


def test_a_dead_server_raises_and_scores_nothing(tmp_path):
    # (issue 23: a transport failure is the floor's EndpointError; OG.JudgeError, which was an alias
    # of it, now names an unreadable verdict)
    with FakeOpenAIServer(lambda b, s: FakeReply(status=500, error_message="boom")) as srv:
        task = OG.OptionGenTask(judge=OG.LLMJudge(client(srv.base_url, tmp_path, "off", attempts=1)))
        with pytest.raises(EndpointError, match="mastracebench/option_gen/judge/high0002-q0/"):
            task.score(GOOD, BATS)
    task = OG.OptionGenTask(judge=OG.LLMJudge(client("http://127.0.0.1:9/v1", tmp_path, "off", attempts=1)))
    with pytest.raises(EndpointError):
        task.score(GOOD, BATS)
    assert task.take_scoring_calls() == []  # nothing was scored, nothing memoised


# ------------------------------------------------------------------ rubrics

def test_rubrics_are_built_once_cached_in_a_file_and_checked(tmp_path):
    path = tmp_path / "rubrics.json"
    with FakeOpenAIServer(handler) as srv:
        builder = OG.LLMRubricBuilder(client(srv.base_url, tmp_path, "off"))
        cache = OG.RubricCache(builder, path)
        got = cache.prepare(ITEMS)
        assert srv.n_requests == len(ITEMS) and len(cache) == len(ITEMS)
        assert cache.get(BATS) == got[2] and srv.n_requests == len(ITEMS)
    assert got[2].correct == "Must say that bats eat crop pests." and got[2].source == builder.source
    data = json.loads(path.read_text())
    assert data["version"] == 1 and set(data["rubrics"]) == set(BY_ID)
    dead = OG.LLMRubricBuilder(client("http://127.0.0.1:9/v1", tmp_path, "off", attempts=1))
    assert OG.RubricCache(dead, path).get(BATS) == got[2]  # read from the file: no call
    changed = OG.OptionGenItem(BATS.id, BATS.article, BATS.question, BATS.options, "A")
    with pytest.raises(ValueError, match="built for a different item"):
        OG.RubricCache(dead, path).get(changed)
    with pytest.raises(ValueError, match="built by llm:fake-model.*this cache builds with optiongen-rubric-offline"):
        OG.RubricCache(path=path).get(BATS)
    with pytest.raises(EndpointError):  # was OG.JudgeError, an alias of it before issue 23
        OG.RubricCache(dead).get(BATS)
    (tmp_path / "broken.json").write_text("{}")
    with pytest.raises(ValueError, match="not a rubric file"):
        OG.RubricCache(path=tmp_path / "broken.json")


def test_an_unreadable_rubric_reply_raises(tmp_path):
    with FakeOpenAIServer(lambda b, s: FakeReply("Sure! Here are some thoughts.")) as srv:
        with pytest.raises(ValueError, match="unreadable rubric reply"):
            OG.LLMRubricBuilder(client(srv.base_url, tmp_path, "off"))(BATS)


def test_offline_rubrics_are_deterministic_and_grounded_in_the_reference_options():
    r = OG.offline_rubric(BATS)
    assert r == OG.offline_rubric(BATS) and r.source == OG.OFFLINE_RUBRIC_VERSION and r.item == BATS.fingerprint()
    assert '"Bats eat insects that harm crops"' in r.correct and "which protects crops" in r.correct
    assert all(f'"{d.rstrip(".")}"' in r.distractors for d in BATS.distractors)
    assert OG.Rubric.from_dict(r.to_dict()) == r
    assert isinstance(OG.judge_for(O.HeuristicBackend()), OG.RuleJudge)


# ------------------------------------------------------------------ an unreadable judge through the run grid

def test_an_unreadable_judge_fails_the_unit_and_a_rerun_finishes_it(tmp_path):
    from collablab.runs import load_failures, load_run, run_grid
    from collablab.studies import mastracebench as S

    def serve(judge_reply: str):
        def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
            if body["model"] != "judge":
                return FakeReply(json.dumps(GOOD.to_dict()))
            if _judge_text(body).startswith("You prepare the scoring criteria"):
                return FakeReply(RUBRIC_REPLY)
            server.count("judge")
            return FakeReply(judge_reply)
        return handler

    with FakeOpenAIServer() as probe:  # a free port for both servers
        port = probe.port
    spec = {"task": "option_gen", "method": "Single-Agent", "instance": 0, "race_path": str(JSONL), "backend": "llm",
            "model": "m0", "judge_model": "judge", "base_url": f"http://127.0.0.1:{port}/v1",
            "llm_cache": str(tmp_path / "c.sqlite"), "llm_cache_mode": "rw", "llm_max_attempts": 1}
    grid = dict(study="mastracebench", out_root=tmp_path, run_id="r", workers=1, validate=S.validate)
    with FakeOpenAIServer(serve("The distractors are decent; I would say 7/10."), port=port, models=["m0", "judge"]) as srv:
        with pytest.warns(UserWarning, match="1 of 1 episodes failed"):
            res = run_grid([spec], **grid)
        assert srv.count("judge") - 1 == 1 + OG.JUDGE_REASKS  # three asks, all unreadable
    assert res.n_failed == 1 and res.n_done == 0
    fail = load_failures(res.run_dir).iloc[0]
    assert fail["error_type"] == "JudgeError"
    assert "no readable verdict on item" in fail["error"] and "I would say 7/10" in fail["error"]
    # the rerun replays the MAS call, the rubric and the three unreadable asks from the cache, then asks afresh
    with FakeOpenAIServer(serve(JUDGE_REPLY), port=port, models=["m0", "judge"]) as srv:
        res = run_grid([spec], **grid)
        assert srv.count("judge") - 1 == 1
    assert res.ok and res.n_new == 1 and not res.failures
    episodes, steps = load_run(res.run_dir)
    (t,) = S.trajectories_of(steps)
    assert t.answer.score == 80.0 and t.scorer["model"] == "judge"
