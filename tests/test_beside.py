"""The shared floor of "a run beside its paper" (analysis/beside.py, issue 25): model names, verdicts
against the run's interval, the three kinds, the text, HTML and figure a reader sees."""

from __future__ import annotations

import pandas as pd
import pytest

from collablab.analysis.beside import (Beside, Comparison, compare, normalise_model, paper_model, published_plot,
                                      same_model)
from collablab.analysis.lift import wilson_ci
from collablab.analysis.published import PublishedTable
from collablab.runs.notebook import check_run_parameters

KNOWN = {"Qwen/Qwen3-VL-32B-Instruct": "Qwen3-VL-32B", "gpt-5.4": "GPT-5.4",
         "meta-llama/Llama-3.1-8B-Instruct": "Llama 8B"}


@pytest.mark.parametrize("served, name", [
    ("Qwen/Qwen3-VL-32B-Instruct", "Qwen3-VL-32B"),            # exact default
    ("qwen/qwen3-vl-32b-instruct", "Qwen3-VL-32B"),            # case
    ("Qwen3-VL-32B-Instruct-AWQ", "Qwen3-VL-32B"),             # no org, a quantization suffix
    ("qwen3-vl-32b-instruct-q4_k_m.gguf", "Qwen3-VL-32B"),     # a llama.cpp file name
    ("Qwen3-VL-32B", "Qwen3-VL-32B"),                          # the paper's own name
    ("gpt-5.4-2026-03-05", "GPT-5.4"),                         # a dated OpenAI id
    ("unsloth/Llama-3.1-8B-Instruct-GGUF", "Llama 8B"),
    ("Qwen/Qwen3-VL-8B-Instruct", None),                       # a different size is not the same model
    ("", None),
])
def test_served_ids_read_as_the_papers_names(served: str, name: str | None) -> None:
    assert paper_model(served, KNOWN) == name


def test_a_notebooks_paper_models_win_over_the_defaults() -> None:
    assert paper_model("my-org/finetune-7", KNOWN, {"my-org/finetune-7": "GPT-5.4"}) == "GPT-5.4"
    assert paper_model("Qwen/Qwen3-VL-32B-Instruct", KNOWN, {"Qwen/Qwen3-VL-32B-Instruct": "GPT-5.4"}) == "GPT-5.4"
    assert normalise_model("meta-llama/Llama-3.1-8B-Instruct") == "llama-3-1-8b"


def test_one_model_spelt_two_ways_in_one_paper() -> None:
    assert same_model("Qwen3-VL-32B", "Qwen3-32B-VL") and not same_model("Qwen3-VL-32B", "Qwen3-VL-8B")
    t = _table()
    spelt = PublishedTable(t.name, t.rows.replace({"model": {"M": "Qwen3-32B-VL"}}), t.paper, t.table, t.caption,
                           t.section, t.scale, "")
    c = compare(_run(), spelt, model="Qwen3-VL-32B", kind="reproduction", on=["n_agents"])
    assert c is not None and c.model == "Qwen3-32B-VL" and c.rows["published"].iloc[0] == 0.5


@pytest.mark.parametrize("bad", [["a"], {"a": ""}, {"": "x"}, {"a": 3}, "Qwen3-VL-32B"])
def test_paper_models_parameter_is_checked(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^paper_models: .* allowed: "):
        check_run_parameters({"paper_models": bad})
    check_run_parameters({"paper_models": {"a/b": "Qwen3-VL-32B"}})


def _table() -> PublishedTable:
    rows = pd.DataFrame({"model": ["M", "M", "M", "Other"], "n_agents": [1, 2, 3, 1],
                         "metric": ["SR"] * 4, "value": [0.5, 0.9, 0.1, 0.7]})
    return PublishedTable("table09", rows, "Paper", "Table 9", "SR by team size.", "App. D", "fraction", "")


def _run() -> pd.DataFrame:
    out = []
    for n, k, N in ((1, 12, 24), (2, 12, 24), (3, 12, 24), (4, 6, 24)):
        lo, hi = wilson_ci(k, N)
        out.append({"n_agents": n, "metric": "SR", "value": k / N, "low": lo, "high": hi, "n": N})
    return pd.DataFrame(out)


def test_verdicts_against_the_runs_interval() -> None:
    c = compare(_run(), _table(), model="M", kind="reproduction", on=["n_agents"], rates=["SR"], x="n_agents")
    assert c is not None
    lo, hi = wilson_ci(12, 24)  # about [0.31, 0.69]
    assert lo < 0.5 < hi and 0.9 > hi and 0.1 < lo
    assert c.rows["verdict"].tolist() == ["inside", "above", "below", "no published row"]
    assert c.rows["published"].iloc[:3].tolist() == [0.5, 0.9, 0.1]
    assert c.counts() == {"inside": 1, "above": 1, "below": 1, "no published row": 1}
    assert "inside this run's 95% interval in 1 of 3 cells (1 above, 1 below" in c.summary()
    assert compare(_run(), _table(), model="Nobody", kind="reference", on=["n_agents"]) is None


def test_a_percent_table_beside_fractions() -> None:
    t = _table()
    pct = PublishedTable(t.name, t.rows.assign(value=t.rows["value"] * 100), t.paper, t.table, t.caption,
                         t.section, "percent", "")
    c = compare(_run(), pct, model="M", kind="reproduction", on=["n_agents"], scale=100)
    assert c.rows["published"].iloc[:3].tolist() == pytest.approx([0.5, 0.9, 0.1])


def test_kinds_are_checked() -> None:
    with pytest.raises(ValueError, match="kind: 'replication' is not allowed; allowed: reproduction, calibration"):
        Comparison(_table(), "M", "replication", pd.DataFrame(), ("metric",))


def test_what_a_reader_sees(tmp_path) -> None:
    c = compare(_run(), _table(), model="M", kind="reference", on=["n_agents"], rates=["SR"], x="n_agents")
    heuristic = Beside("demo", "heuristic", None, None, [c], ["Reference model M: the paper's main model."], tmp_path)
    text = heuristic.text()
    assert "rule-based" in text and "never a reproduction" in text and "Paper Table 9 · M · reference" in text
    assert "50.0% [31.4, 68.6]" in text and "90.0%" in text and "above" in text and "no published row" in text
    html = heuristic._repr_html_()
    assert "<table" in html and "reference only" in html and "Reference model M" in html
    assert (tmp_path / "tables" / "published_table09.csv").exists()
    llm = Beside("demo", "compat:Qwen/Qwen3-VL-32B-Instruct", "Qwen/Qwen3-VL-32B-Instruct", "M", [c])
    assert "is the paper's **M**" in llm.markdown()
    unknown = Beside("demo", "compat:my-model", "my-model", None, [c])
    assert "paper_models" in unknown.lead() and "no model named `my-model`" in unknown.lead()
    empty = Beside("demo", "heuristic", None, None, [])
    assert "No published table has a row" in empty.text() and empty.figure() is None


def test_the_figure_puts_the_paper_and_the_run_on_one_axis() -> None:
    c = compare(_run(), _table(), model="M", kind="reproduction", on=["n_agents"], rates=["SR"], x="n_agents")
    fig = published_plot(c, backend="compat:m")
    (ax,) = fig.axes
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sorted(labels) == ["paper (M)", "this run"]
    paper_line = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"][0]
    assert list(paper_line.get_ydata()[:3]) == pytest.approx([50.0, 90.0, 10.0])
    assert "backend: compat:m" in fig.get_suptitle()


def test_a_table_whose_rows_all_agree_keeps_its_results() -> None:
    """Results are never moved to the caption, even when every row agrees (only constant keys are)."""
    run = _run().iloc[:1].assign(n_agents=1)
    c = compare(pd.concat([run, run.assign(metric="CR")]), _table(), model="M", kind="reference", on=["n_agents"])
    t = c.display()
    assert list(t.frame.columns) == ["metric", "run [95% CI]", "n", "paper", "verdict"] and "n_agents 1" in t.note
    assert repr(Beside("demo", "heuristic", None, None, [c])).startswith("This run's backend is heuristic")


def test_of_run_names_the_served_model_only_for_a_model_backend() -> None:
    off = Beside.of_run("demo", "heuristic", {"model": "Qwen/Qwen3-VL-32B-Instruct"}, KNOWN)
    assert (off.served, off.model) == (None, None)
    llm = Beside.of_run("demo", "vllm:Qwen/Qwen3-VL-32B-Instruct", {"model": "Qwen/Qwen3-VL-32B-Instruct"}, KNOWN)
    assert (llm.served, llm.model) == ("Qwen/Qwen3-VL-32B-Instruct", "Qwen3-VL-32B")
    mapped = Beside.of_run("demo", "vllm:x", {"model": "my/x", "paper_models": {"my/x": "GPT-5.4"}}, KNOWN)
    assert mapped.model == "GPT-5.4"
