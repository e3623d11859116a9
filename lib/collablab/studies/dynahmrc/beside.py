"""Notebook 06's run beside its paper (issue 25): the cells of dynahmrc.tex's result tables that
``published/`` holds (``tab:constant_exp``, ``tab:goal_exp``, ``tab:area_exp``,
``tab:addition_exp``, ``tab:removal_exp``, ``tab:central_1``, ``tab:central_2``,
``tab:ablation``; §4.5), each beside this run's value and 95% interval.

**Metrics (§4.4), all made by :func:`.metrics.episode_metrics` and averaged over a cell's episodes.**
The tables print fractions and means, as the run does (scale 1): ``success`` (SUCC, the share of
successful episodes, Wilson interval :func:`~collablab.analysis.lift.wilson_ci`); ``ps`` (PS, mean
partial success), ``ts`` (TS, mean temporal steps), ``as_per_robot`` (AS, mean non-wait actions
per robot: the study reads the paper's AS per robot) and ``cc`` (CC, mean ``communicate`` actions
per robot, the paper's formula with |E| = 1), each with the percentile bootstrap interval of the
study's figures (:func:`.stats.summary_table`, ``n_resamples`` of the run). The paper prints no
AS or CC for MCTS and MCTS-NoINS and no CC for COHERENT ('-'): those rows compare the rest.

**Cells (the tables' condition columns).** Episodes are read through
:func:`.experiments.episode_frame`; only the unablated framework and baselines count
(``ablation`` full) except in ``tab:ablation``:

- ``tab:constant_exp``: static tasks by ``method``, ``n_types`` (the paper's "N types of robot"
  blocks pool our compositions with that many types), ``kind`` and ``level``;
- ``tab:goal_exp`` / ``tab:area_exp``: CTO / IRZ episodes by ``n_types`` and ``kind`` (medium,
  30-step cap, as the paper);
- ``tab:addition_exp`` / ``tab:removal_exp``: ANC / REC episodes by ``team``, ``team_after``
  (the record's ``team_after``: REC's spec key ``remove`` runs each of the paper's four transitions;
  records without it take :data:`.robots.ANC_TRANSITIONS` / :data:`.robots.REC_TRANSITIONS`) and ``kind``;
- ``tab:central_1``: DynaHMRC and COHERENT by ``n_types`` and ``setting`` (Static pools every
  static kind and level, as the notebook's centralized table: the paper does not say which static
  tasks the row pools); ``tab:central_2``: ANC and REC by ``team`` and ``team_after``;
- ``tab:ablation``: DynaHMRC by ``ablation`` and ``setting``; the Static row pools the static tasks
  the ablations ran on (``ablation_levels``), the others every variation; our appendix ablations
  (memory 15, 50% random votes) and LLM-MCTS have no transcribed row and are left out.

Every metric a row label has is compared in every cell the run has; cells the run lacks (a method,
level or team not in its grid) are skipped: notably MCTS's rows of the four dynamic tables
(notebook 06 runs the search baselines on static tasks only) and, by default, its hard static cells
(``search_levels``).

**Which rows (the kind of each comparison).** A comparison is one table beside one of the paper's
row labels (its ``model`` column): the DynaHMRC backbone, or a baseline by its printed name.

- DynaHMRC rows: an LLM run of a model the paper ran (:data:`PAPER_MODELS`, or the notebook's
  ``paper_models``) is a *reproduction* of that backbone's rows (tables without them are skipped);
  an offline run, or a model the paper did not run, is a *reference* beside
  :data:`REFERENCE_MODEL`, GPT-4o: the paper's main backbone, the only one in every table, and the
  one it ran CoELA and COHERENT on, so every method is compared with one backbone; in
  ``tab:ablation`` the reference is :data:`ABLATION_REFERENCE`, Qwen3-4B, the only backbone the
  paper ablated. The offline profile (:mod:`.offline`) was tuned on no paper cell: never a
  calibration.
- CoELA and COHERENT: the paper ran both on GPT-4o (§4.5 "CoELA, which also leverages GPT-4o";
  appendix LLM cost "both methods use GPT-4o"), so an LLM run on GPT-4o reproduces their rows and
  any other backend is a reference.
- MCTS and MCTS-NoINS: always a *reference*. Our planner (:mod:`.mcts`) implements §4.2's
  description (global observation, joint action space, pruning, the navigation heuristic, the
  human instruction), but its budget (``mcts_iterations``, ``mcts_max_sim_actions``: the paper's
  "limited time" is unstated), depth, reward and rollout policy are ours, and it searches our
  generated apartments, not the paper's simulator, so the same name is not the same experiment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ...analysis.beside import Beside, compare, is_offline, same_model
from ...analysis.findings import backend_of
from ...analysis.lift import wilson_ci
from ...analysis.published import PublishedTable, load_published
from .difficulty import LEVELS
from .experiments import ABLATIONS, episode_frame
from .report import SETTINGS
from .robots import ANC_TRANSITIONS, COMPOSITIONS, REC_TRANSITIONS
from .stats import METRICS, summary_table

__all__ = ["ABLATION_REFERENCE", "BASELINES", "PAPER_MODELS", "REFERENCE_MODEL", "beside_paper", "cells"]

#: Served model id → the paper's model name (§4.2 backbones; ``tab:ablation``'s other models):
#: OpenAI / Anthropic / Gemini / DeepSeek API ids, Hugging Face ids as vLLM serves them, OpenRouter
#: and Ollama names. Organisations and -Instruct / date / quantization suffixes are read off by
#: :func:`collablab.analysis.beside.paper_model`.
PAPER_MODELS: dict[str, str] = {
    "gpt-4o": "GPT-4o",
    "gpt-4o-2024-05-13": "GPT-4o",
    "gpt-4o-2024-08-06": "GPT-4o",
    "gpt-4o-2024-11-20": "GPT-4o",
    "openai/gpt-4o": "GPT-4o",
    "Qwen/Qwen3-4B-Instruct-2507": "Qwen3-4B",
    "Qwen/Qwen3-4B": "Qwen3-4B",
    "Qwen/Qwen3-4B-AWQ": "Qwen3-4B",
    "unsloth/Qwen3-4B-Instruct-2507-GGUF": "Qwen3-4B",
    "qwen3:4b": "Qwen3-4B",
    "qwen3:4b-instruct": "Qwen3-4B",
    "gemini-2.5-flash": "Gemini-2.5-Flash",
    "google/gemini-2.5-flash": "Gemini-2.5-Flash",
    "claude-3-7-sonnet-20250219": "Claude-3.7-Sonnet",
    "claude-3-7-sonnet-latest": "Claude-3.7-Sonnet",
    "anthropic/claude-3.7-sonnet": "Claude-3.7-Sonnet",
    "deepseek-ai/DeepSeek-V3": "DeepSeek-V3",
    "deepseek-ai/DeepSeek-V3-0324": "DeepSeek-V3",
    "deepseek-chat": "DeepSeek-V3",
    "deepseek/deepseek-chat": "DeepSeek-V3",
    "Qwen/Qwen3-235B-A22B-Instruct-2507": "Qwen3-235B-A22B-Instruct",
    "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8": "Qwen3-235B-A22B-Instruct",
    "Qwen/Qwen3-235B-A22B": "Qwen3-235B-A22B-Instruct",
    "qwen/qwen3-235b-a22b-2507": "Qwen3-235B-A22B-Instruct",
}
#: The backbone an offline run, or a model the paper did not run, is shown beside (module docstring).
REFERENCE_MODEL = "GPT-4o"
#: The reference in ``tab:ablation``: the only backbone with component ablations.
ABLATION_REFERENCE = "Qwen3-4B"
#: Baselines by our method code: the paper's row label (its ``model`` column).
BASELINES = {"coela": "CoELA", "coherent": "COHERENT", "mcts": "MCTS", "mcts_noins": "MCTS-NoINS"}
#: The backbone the paper ran its LLM baselines on.
BASELINE_BACKBONE = "GPT-4o"
#: Our methods with published rows, in the order their comparisons are shown.
METHODS = ("dynahmrc", "coela", "coherent", "mcts", "mcts_noins")
RATES = ("success", "ps")
_FOLDER = Path(__file__).with_name("published")
_FULL = "full"

#: The paper's order of the condition values that are not numbers.
_ORDER: dict[str, tuple[str, ...]] = {"level": LEVELS, "setting": SETTINGS, "team": COMPOSITIONS,
                                      "team_after": COMPOSITIONS, "ablation": tuple(ABLATIONS)}

Where = Callable[[pd.DataFrame, Mapping[str, Any]], pd.Series]


def _ablation_levels(e: pd.DataFrame, P: Mapping[str, Any]) -> list[str]:
    """The static levels the ablations ran on: ``P``'s ``ablation_levels``, else those with an
    ablated static episode."""
    if P.get("ablation_levels") is not None:
        return list(P["ablation_levels"])
    return sorted(set(e.loc[(e["setting"] == "Static") & (e["ablation"] != _FULL), "level"]))


#: Per table (in the paper's order): the episodes its cells pool (module docstring), and the
#: figure's axes (x, hue) where one row per (x, hue, metric) makes a readable curve.
TABLES: dict[str, tuple[Where, tuple[str, str] | None]] = {
    "constant_exp": (lambda e, P: (e["setting"] == "Static") & (e["ablation"] == _FULL), None),
    "goal_exp": (lambda e, P: (e["setting"] == "CTO") & (e["ablation"] == _FULL), None),
    "area_exp": (lambda e, P: (e["setting"] == "IRZ") & (e["ablation"] == _FULL), None),
    "addition_exp": (lambda e, P: (e["setting"] == "ANC") & (e["ablation"] == _FULL), None),
    "removal_exp": (lambda e, P: (e["setting"] == "REC") & (e["ablation"] == _FULL), None),
    "central_1": (lambda e, P: e["setting"].isin(["Static", "CTO", "IRZ"]) & (e["ablation"] == _FULL),
                  ("n_types", "setting")),
    "central_2": (lambda e, P: e["setting"].isin(["ANC", "REC"]) & (e["ablation"] == _FULL), None),
    "ablation": (lambda e, P: (e["method"] == "dynahmrc")
                 & (e["level"].isin(_ablation_levels(e, P)) | (e["setting"] != "Static")), None),
}


def cells(e: pd.DataFrame, by: list[str], metrics: tuple[str, ...] = METRICS, n_resamples: int = 10_000
          ) -> pd.DataFrame:
    """The run's cells of a table: per group of ``by`` (columns of ``e``, an
    :func:`~.experiments.episode_frame` with ``ablation`` and ``team_after``) and ``metric``, the
    ``value``, its 95% interval (``low``, ``high``: Wilson for ``success``, the percentile bootstrap
    of :func:`.stats.summary_table` for the means) and ``n`` episodes."""
    cols = [*by, "metric", "value", "low", "high", "n"]
    if e.empty:
        return pd.DataFrame(columns=cols)
    means = [m for m in metrics if m != "success"]
    t = summary_table(e, by, metrics=means, n_resamples=n_resamples)
    wins = e.groupby(by, sort=True, observed=True, dropna=False)["success"].sum()
    rows = []
    for _, r in t.iterrows():
        key = tuple(r[k] for k in by)
        n = int(r["n"])
        for m in metrics:
            if m == "success":
                k = int(round(float(wins.loc[key if len(by) > 1 else key[0]])))
                value, (low, high) = k / n, wilson_ci(k, n)
            else:
                value, low, high = r[f"{m}_mean"], r[f"{m}_low"], r[f"{m}_high"]
            rows.append({**dict(zip(by, key)), "metric": m, "value": float(value), "low": float(low),
                         "high": float(high), "n": n})
    out = pd.DataFrame(rows, columns=cols)
    if len(out):  # the paper's order (Static before CTO, easy before hard), not the alphabet's
        out = out.sort_values(by, key=lambda s: s.map({v: i for i, v in enumerate(_ORDER[s.name])})
                              if s.name in _ORDER else s, kind="stable").reset_index(drop=True)
    return out


def _frame(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episode frame with the tables' own columns: ``ablation`` (full or ``w/o X``, the
    paper's labels) and ``team_after`` (the composition after an ANC or REC change)."""
    e = episode_frame(episodes)
    after = {"ANC": ANC_TRANSITIONS, "REC": REC_TRANSITIONS}
    default = [after.get(v, {}).get(t, t) for v, t in zip(e["variation"], e["team"])]
    # the record's own team_after (it names which robot a REC removed, spec key remove); records
    # written before it existed take the default transition
    e["team_after"] = e["team_after"].fillna(pd.Series(default, index=e.index)) if "team_after" in e else default
    return e.assign(ablation=e["ablation_label"])


def _who(method: str, table: PublishedTable, model: str | None, offline: bool) -> tuple[str, str] | None:
    """The paper's row label this run's ``method`` rows go beside in ``table``, and the kind; None
    when there is nothing to compare (the run's model has no row of this table)."""
    if method in ("mcts", "mcts_noins"):
        return BASELINES[method], "reference"
    if method in BASELINES:
        return BASELINES[method], "reproduction" if not offline and model == BASELINE_BACKBONE else "reference"
    if not offline and model is not None:  # the table's own spelling of the model, if it has one
        names = [m for m in dict.fromkeys(table.rows["model"]) if same_model(str(m), model)]
        return (names[0], "reproduction") if names else None
    return (ABLATION_REFERENCE if table.name == "ablation" else REFERENCE_MODEL), "reference"


def beside_paper(name: str, episodes: pd.DataFrame, steps: pd.DataFrame, P: Mapping[str, Any],
                 run_dir: str | Path | None = None) -> Beside:
    """Notebook ``name``'s run beside the paper's tables (module docstring): per table and method,
    the paper's row label, the run's cells with 95% intervals and a verdict per cell. Reads only
    the episode records and ``P``'s ``model``, ``paper_models``, ``ablation_levels`` and
    ``n_resamples`` (``steps`` is not needed: every metric is in the episode records)."""
    llm_rows = episodes[~episodes["method"].astype(str).str.contains("mcts")] \
        if len(episodes) and "method" in episodes.columns else episodes
    backend = backend_of(llm_rows if len(llm_rows) else episodes) if len(episodes) else str(P.get("backend", "unknown"))
    B = Beside.of_run("dynahmrc", backend, P, PAPER_MODELS, run_dir)
    offline, model = is_offline(backend), B.model
    if not len(episodes) or "method" not in episodes.columns:
        return B
    e = _frame(episodes)
    nr = int(P.get("n_resamples") or 10_000)
    tables = load_published(_FOLDER)
    kinds: dict[str, set[str]] = {}
    for key, (where, axes) in TABLES.items():
        table = tables[key]
        part = e[where(e, P)]
        on = table.conditions
        for method in [m for m in METHODS if m in set(table.rows["method"]) & set(part["method"])]:
            found = _who(method, table, model, offline)
            if found is None:
                continue
            who, kind = found
            pub = table.rows[(table.rows["model"] == who) & (table.rows["method"] == method)]
            rows = part[part["method"] == method]
            if "ablation" in on:
                rows = rows[rows["ablation"].isin(set(pub["ablation"]))]
            metrics = tuple(m for m in METRICS if m in set(pub["metric"]))
            if pub.empty or rows.empty:
                continue
            run = cells(rows, on, metrics, nr)
            c = compare(run, table, model=who, kind=kind, on=on, rates=RATES, x=axes[0] if axes else None,
                        hue=axes[1] if axes else None, why=f"{method} rows beside the paper's {who}")
            if c is not None:
                B.comparisons.append(c)
                kinds.setdefault(who, set()).add(kind)
    B.notes.extend(_notes(kinds, model, offline))
    return B


def _notes(kinds: Mapping[str, set[str]], model: str | None, offline: bool) -> list[str]:
    """What each comparison's paper rows are and why (short sentences for the reader)."""
    notes = []
    refs = [m for m in (REFERENCE_MODEL, ABLATION_REFERENCE) if "reference" in kinds.get(m, set())]
    if refs:
        why = "the offline robots were tuned on no paper cell" if offline else "the paper did not run this model"
        notes.append(f"DynaHMRC's rows are beside the paper's **{REFERENCE_MODEL}** backbone (its main one, "
                     f"in every table, and the one its CoELA and COHERENT ran on)"
                     + (f"; tab:ablation beside **{ABLATION_REFERENCE}**, the only backbone it ablated" if
                        ABLATION_REFERENCE in refs else "") + f": {why}.")
    if "reference" in kinds.get("CoELA", set()) | kinds.get("COHERENT", set()):
        notes.append(f"CoELA and COHERENT are a reference: the paper ran both on {BASELINE_BACKBONE}, "
                     "this run did not.")
    if "MCTS" in kinds or "MCTS-NoINS" in kinds:
        notes.append("MCTS and MCTS-NoINS are a reference: our search follows §4.2's description, but its "
                     "budget, reward and rollouts are ours and it searches our apartments, not the paper's "
                     "simulator.")
    if model == "Qwen3-4B" and not offline:
        notes.append("The paper's Qwen3-4B is fine-tuned on its own 30,390 samples (§3, Data Construction): a base "
                     "Qwen3-4B-Instruct is expected below its rows (docs/dynahmrc_finetuning.md fine-tunes one).")
    return notes
