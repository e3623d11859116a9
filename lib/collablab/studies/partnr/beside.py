"""Notebook 07's run beside its paper (issue 25): the cells of Tables 2, 3, 10 and 11 of
observe_share_predict.txt that ``published/`` holds, each beside this run's value and 95% interval.

How each published metric is made from the run's records (the tables' own functions, in
:mod:`.report`):

- **Table 3** (§4.2, §A.3.1; Decoupled Partial Observability, per context and OANA off/on):
  ``SR`` (percent → the run's success fraction, Wilson interval), ``EE`` (percent → the mean of
  the episodes' Extraneous Effort fractions, t interval) and ``steps`` (a count: mean simulation
  steps per episode, t interval), all from :func:`.report.condition_table`. The paper's steps are
  Habitat simulator steps, ours the household clock: the two scales differ, so a steps verdict
  says only where the paper's number falls on ours.
- **Table 2** (§4.4, §A.3.3; partial observability with OANA, union target, per context and
  agent): ``type_acc`` (over every scored prediction) and ``cond_principal`` (over the
  predictions of the right type), from :func:`.report.prediction_frames`, percent → fractions,
  Wilson intervals. The CSV has no OANA column: predictions exist only with OANA on.
- **Tables 10 and 11** (§A.5.2; full observability with OANA): Action Type accuracy under the
  union (Table 10) and the strict next-action target (Table 11), made the same way.

The Wilson intervals of prediction rates treat the pooled predictions as independent; they
cluster within episodes, so those intervals are too narrow. Every other metric of these tables
(Percent Complete, planning cycles, the parameter accuracies of Tables 10-11 ...) has no
transcribed cell: the paper text we hold states only the cells ``published/index.csv`` lists, so
most of the run's conditions show "no published row".

Models (§A.1, §5): the paper ran Llama 8B and Llama 70B (4-bit) locally and Gemini 3.1 Flash Lite
and DeepSeek V3.2 through OpenRouter; it does not say which Llama 3 release, so the 3.1 and
3.3 Instruct ids both map to its Llama names. Offline runs and models the paper did not run are
*references*, never reproductions: the heuristic planner (:mod:`.offline`) was tuned on no paper
cell. The reference is :data:`REFERENCE_MODEL`, Llama 8B, the planner with the most transcribed
cells (12 in Tables 2 and 3); a table with no Llama 8B cell (Tables 10 and 11 hold only Llama
70B's) is shown beside the model with the most cells in it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ...analysis.beside import Beside, Comparison, compare, is_offline
from ...analysis.findings import backend_of
from ...analysis.lift import wilson_ci
from ...analysis.published import PublishedTable, load_published
from .experiments import episode_frame
from .report import condition_table, prediction_frames

__all__ = ["PAPER_MODELS", "REFERENCE_MODEL", "beside_paper", "outcome_rows", "prediction_rows"]

#: Served model id → the paper's model name (§A.1): Hugging Face ids as vLLM serves them, Ollama
#: tags and OpenRouter ids (the paper's route to Gemini and DeepSeek). Organisations and suffixes
#: (-Instruct, -AWQ-INT4, -FP8, GGUF quantizations) are read off by
#: :func:`collablab.analysis.beside.paper_model`, so ``gemini-3.1-flash-lite`` (the Gemini API),
#: ``deepseek-ai/DeepSeek-V3.2`` and ``Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf`` need no entry.
PAPER_MODELS: dict[str, str] = {
    "meta-llama/Llama-3.1-8B-Instruct": "Llama 8B",
    "meta-llama/Meta-Llama-3.1-8B-Instruct": "Llama 8B",
    "llama3.1:8b": "Llama 8B",
    "meta-llama/Llama-3.1-70B-Instruct": "Llama 70B",
    "meta-llama/Meta-Llama-3.1-70B-Instruct": "Llama 70B",
    "meta-llama/Llama-3.3-70B-Instruct": "Llama 70B",
    "llama3.1:70b": "Llama 70B",
    "llama3.3:70b": "Llama 70B",
    "google/gemini-3.1-flash-lite": "Gemini",
    "google/gemini-3.1-flash-lite-preview": "Gemini",
    "deepseek/deepseek-v3.2": "DeepSeek",
    "deepseek/deepseek-v3.2-exp": "DeepSeek",
}
#: The paper model an offline run, or a model the paper did not run, is shown beside.
REFERENCE_MODEL = "Llama 8B"
_FOLDER = Path(__file__).with_name("published")
_TABLE3_PERCENT = ("SR", "EE")


def outcome_rows(E: pd.DataFrame) -> pd.DataFrame:
    """Table 3's cells of a run (``E``: :func:`.experiments.episode_frame` rows), partial
    observability only: per ``context``, ``oana`` and ``metric`` (SR, steps, EE) the value, its 95%
    interval (``low``, ``high``) and ``n`` episodes (:func:`.report.condition_table`)."""
    C = condition_table(E)
    C = C[C["observability"] == "partial"]
    rows = [{"context": r["context"], "oana": bool(r["oana"]), "metric": m, "value": r[m], "low": r[f"{m}_low"],
             "high": r[f"{m}_high"], "n": int(r["n"])} for _, r in C.iterrows() for m in ("SR", "steps", "EE")]
    return pd.DataFrame(rows, columns=["context", "oana", "metric", "value", "low", "high", "n"])


def prediction_rows(E: pd.DataFrame, steps: pd.DataFrame, target: str = "union") -> pd.DataFrame:
    """The prediction cells of a run under ``target`` (union: Tables 2 and 10; strict: Table 11):
    per ``observability``, ``context``, ``agent`` and ``metric`` (type_acc; cond_principal) the
    rate, its Wilson interval and ``n``, the rate's denominator (the predictions; those of the
    right type), from :func:`.report.prediction_frames`."""
    cols = ["observability", "context", "agent", "metric", "value", "low", "high", "n"]
    pred = prediction_frames(E, steps)
    rows = []
    for _, r in pred[pred["target"] == target].iterrows():
        n = int(r["n"])
        typed = round(float(r["type_acc"]) * n) if n else 0
        for metric, den in (("type_acc", n), ("cond_principal", typed)):
            value = float(r[metric])
            low, high = wilson_ci(round(value * den), den) if den else (float("nan"), float("nan"))
            rows.append({"observability": r["observability"], "context": r["context"], "agent": r["agent"],
                         "metric": metric, "value": value, "low": low, "high": high, "n": den})
    return pd.DataFrame(rows, columns=cols)


def _percent_as_fraction(table: PublishedTable, metrics: tuple[str, ...]) -> PublishedTable:
    """``table`` with its percent ``metrics`` as fractions (a mixed table: ``compare`` takes one scale)."""
    rows = table.rows.copy()
    pct = rows["metric"].isin(metrics)
    rows.loc[pct, "value"] = rows.loc[pct, "value"] / 100.0
    return dataclasses.replace(table, rows=rows)


def _reference(table: PublishedTable) -> str:
    """:data:`REFERENCE_MODEL` when ``table`` has its rows, else the model with the most rows."""
    counts = table.rows["model"].value_counts()
    return REFERENCE_MODEL if REFERENCE_MODEL in counts.index else str(counts.index[0])


def beside_paper(name: str, episodes: pd.DataFrame, steps: pd.DataFrame, P: Mapping[str, Any],
                 run_dir: str | Path | None = None) -> Beside:
    """Notebook ``name``'s run beside Tables 3, 2, 10 and 11 (see the module docstring): an LLM run
    of a paper model is a reproduction of that model's cells; an offline run, or a model the paper
    did not run, a reference beside :data:`REFERENCE_MODEL` (or the model a table holds). Reads
    only the records and ``P``'s ``model`` and ``paper_models``."""
    backend = backend_of(episodes) if len(episodes) else str(P.get("backend", "unknown"))
    B = Beside.of_run("partnr", backend, P, PAPER_MODELS, run_dir)
    offline, served, model = is_offline(backend), B.served, B.model
    if not len(episodes) or "condition" not in episodes.columns:
        return B
    E = episode_frame(episodes)
    tables = load_published(_FOLDER)
    runs = {
        "table03": (_percent_as_fraction(tables["table03"], _TABLE3_PERCENT), outcome_rows(E),
                    ("context", "oana"), _TABLE3_PERCENT, "context", "oana"),
        "table02": (tables["table02"], _partial(prediction_rows(E, steps)), ("context", "agent"),
                    ("type_acc", "cond_principal"), "context", "agent"),
        "table10": (tables["table10"], _full(prediction_rows(E, steps)), ("observability", "context", "agent"),
                    ("type_acc",), "context", "agent"),
        "table11": (tables["table11"], _full(prediction_rows(E, steps, "strict")),
                    ("observability", "context", "agent"), ("type_acc",), "context", "agent"),
    }
    references: dict[str, list[str]] = {}
    for key, (table, run, on, rates, x, hue) in runs.items():
        scale = 1.0 if key == "table03" else 100.0
        run = run[run["metric"].isin(set(table.rows["metric"]))]
        if model is not None and (table.rows["model"] == model).any():
            who, kind, why = model, "reproduction", f"{served} is the paper's {model}"
        elif model is not None:
            continue  # the paper has no cell of this model in this table
        else:
            who, kind = _reference(table), "reference"
            why = f"reference model {who}: {'offline backend' if offline else 'a model the paper did not run'}"
        c = compare(run.reset_index(drop=True), table, model=who, kind=kind, on=on, rates=rates, scale=scale,
                    why=why, x=x, hue=hue, panel="metric")
        if c is not None:
            B.comparisons.append(c)
            if kind == "reference":
                references.setdefault(who, []).append(table.table)
    for who, names in references.items():
        why = ("the planner with the most transcribed cells of Tables 2 and 3" if who == REFERENCE_MODEL
               else f"the only planner with cells in {' and '.join(names)}")
        B.notes.append(f"Reference model for {' and '.join(names)}: **{who}**, {why}"
                       f"{' (the offline planner was tuned on no paper cell)' if offline else ''}.")
    return B


def _partial(t: pd.DataFrame) -> pd.DataFrame:
    return t[t["observability"] == "partial"].drop(columns="observability")


def _full(t: pd.DataFrame) -> pd.DataFrame:
    return t[t["observability"] == "full"]
