"""A MECoBench run beside its paper (issue 25): the run's episodes made into the cells of
mecobench.txt Tables 8, 9, 11, 12, 13 (App. D.1-D.5) and 20 (App. E.2), each beside the published
value (``published/``) with the run's 95% interval and a verdict (:mod:`collablab.analysis.beside`).

**How each published metric is made from the run** (the paper's conditions: broadcast in Tables 8, 13
and 20, full priors in Tables 8, 9, 11, 12 and 20, the paper's step budget everywhere, §3.1, §6.1;
episodes outside them are not used):

- SR, CR, AUC (§3.2): :func:`.tables.metric_table` (SR: Wilson interval; CR, AUC: t intervals of the
  per-case values, :func:`.tables.mean_interval`).
- DOL, CAR, HFR, SpatialErr (Tables 11-12; eq. 3, App. B.3): the means of :mod:`.metrics` over the
  cases that define them (HFR: cases with a handover attempt), with the t interval of the per-case
  values; TokensPerStep (Table 12's "Tokens", §3.2) the same, for model runs only.
- Table 12 is shown as two tables: effectiveness (SR, CR, AUC) and collaboration quality (DOL, Tokens,
  CAR, Spatial Err, HFR), each with its figure.
- Table 8's Avg. SR / CR (2 agents): the mean of the parallel and the sequential cell, with the
  MOVER interval of that mean (the two Wilson or t intervals combined, Zou & Donner 2008).
- Table 20 (percent; ``scale=100``): the wrong-grab episodes of parallel broadcast runs pooled over the
  run's teams (the paper pools its models), stratified by :func:`collablab.analysis.correction_analysis`
  (the analysis tail's Tables 19-20): per stratum and group SR (Wilson) and CR (t); per-stratum Δ and the
  adjusted effect with the normal interval of :func:`collablab.analysis.stratified_effect`.

**Not compared**: Table 20's ``#Case`` (a count that grows with the run, not a property of the team);
Table 12's Tokens for offline runs (the rule-based player calls no model: 0 tokens); the cells the paper
marks NA or "–" (not transcribed).

**Which rows.** A model run (``backend`` an endpoint label) reads ``P["model"]`` through
:data:`PAPER_MODELS` and ``P["paper_models"]`` (:func:`~collablab.analysis.beside.paper_model`): a model
the paper ran is a *reproduction* of its rows (tables without its rows are skipped, with a note); any
other model is a *reference* beside :data:`REFERENCE_MODEL`. The paper spells Qwen3-VL-8B/32B as
Qwen3-8B-VL/Qwen3-32B-VL in Tables 8 and 11-13 (one model to
:func:`~collablab.analysis.beside.same_model`). The heuristic backend is never a reproduction: each
profile (``P["profile"]``, or each of notebook 04's ``P["profiles"]``) is shown beside the model its
lone-agent SR was calibrated on (:data:`PROFILE_MODELS`, ``agents/heuristic/profiles.py``): the cell of
that calibration (Table 8, 1 agent, parallel, SR; full priors, broadcast, 60 steps) is a *calibration*,
every other cell a *reference* (Table 9's 1-agent SR too: the same run in the paper, but the profiles'
docstring names Table 8). Mixed teams (``"strong,weak"``, notebook 02's ``mixed_teams``) are left out:
the paper's teams are one model each and its mixed-leader Fig. 32 is not transcribed. The oracle (it
reads the true state) is a reference beside :data:`REFERENCE_MODEL`. Table 20 is pooled over the paper's
models (``all``): a reference for every run.

This module only reads records; nothing here changes what a run does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...analysis.beside import Beside, Comparison, compare, is_offline, paper_model, same_model
from ...analysis.published import PublishedTable, load_published
from ...analysis.significance import mean_ci
from . import metrics
from . import tables as T
from .episode import default_budget

__all__ = ["PAPER_MODELS", "PROFILE_MODELS", "REFERENCE_MODEL", "beside_paper", "published_tables",
           "table20_cells"]

#: Served model ids (mecobench.txt Table 6, App. B.2: the OpenAI/Gemini API ids and the Hugging Face
#: ids vLLM serves) -> the paper's name in the published tables.
PAPER_MODELS: dict[str, str] = {
    "gpt-5.4": "GPT-5.4",
    "gpt-5.4-mini": "GPT-5-mini",  # Table 6 lists GPT-5-mini's identifier as gpt-5.4-mini
    "gpt-5-mini": "GPT-5-mini",
    "gemini-3.1-pro": "Gemini-3.1-Pro",
    "gemini-3.1-pro-preview": "Gemini-3.1-Pro",
    "Qwen/Qwen3-VL-8B-Instruct": "Qwen3-VL-8B",
    "Qwen/Qwen3-VL-32B-Instruct": "Qwen3-VL-32B",
    "Qwen/Qwen3-VL-235B-A22B-Instruct": "Qwen3-235B-VL",
    "Qwen/Qwen3.5-9B": "Qwen3.5-9B",
    "Qwen/Qwen3.5-27B": "Qwen3.5-27B",
    "google/gemma-4-26b-it": "Gemma4-26B",
    "google/gemma-4-31b-it": "Gemma4-31B",
    "OpenGVLab/InternVL3_5-38B": "InternVL-3.5-38B",
    "OpenGVLab/InternVL3_5-241B-A28B": "InternVL-3.5-241B",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": "Llama-4",
    "zai-org/GLM-4.6V": "GLM-4.6V",
    "zai-org/GLM-4.6V-Flash": "GLM-4.6V-Flash",
}
#: The model each heuristic profile's ``drift`` was calibrated on (Table 8, 1 agent, parallel SR).
PROFILE_MODELS: dict[str, str] = {"strong": "GPT-5.4", "medium": "Qwen3-VL-32B", "weak": "Qwen3-VL-8B"}
#: The reference for a model the paper did not run and for the oracle: the paper's representative
#: model (App. D.1 selects it for the team-size experiments), the one model in each of Tables 8-13.
REFERENCE_MODEL = "Qwen3-VL-32B"

# Conditions fixed by each table that are not among its columns (the paper's setting, App. D).
_FIXED: dict[str, dict[str, str]] = {"table08": {"protocol": "broadcast", "prior": "full"},
                                     "table09": {"prior": "full"}, "table11": {"prior": "full"},
                                     "table12": {"prior": "full"}, "table13": {"protocol": "broadcast"},
                                     "table20": {"protocol": "broadcast", "prior": "full"}}
# The figure of each table: the paper's and the run's values along x, one colour per hue.
_FIGURE: dict[str, tuple[str | None, str | None]] = {
    "table08": ("n_agents", "structure"), "table09": ("n_agents", "protocol"), "table11": ("protocol", "structure"),
    "table12": ("protocol", "structure"), "table13": ("prior", None), "table20": ("wrong_grabs", "group")}
# The table a notebook's figure shows first (its own question).
_LEAD = {"01_collaboration": ("table09",), "02_modes": ("table12",), "03_priors": ("table13",),
         "04_behaviours": ("table20", "table09"), "04_behaviours_and_failures": ("table20", "table09")}
_PER_CASE = {"DOL": metrics.dol, "CAR": metrics.conflict_action_rate, "HFR": metrics.handover_failure_rate,
             "SpatialErr": metrics.spatial_error_rate, "TokensPerStep": metrics.tokens_per_step}
_COUNTS = frozenset({"TokensPerStep"})
_EFFECTIVENESS = ("SR", "CR", "AUC")
_RUN_COLUMNS = ["metric", "value", "low", "high", "n"]


@lru_cache(maxsize=1)
def published_tables() -> dict[str, PublishedTable]:
    """MECoBench's transcribed tables (``published/``), by file stem."""
    return load_published(Path(__file__).parent / "published")


def _spelling(table: PublishedTable, name: str) -> str | None:
    """The table's spelling of ``name`` (:func:`~collablab.analysis.beside.same_model`: the paper prints
    Qwen3-VL-32B as Qwen3-32B-VL in Tables 8 and 11-13), or None when it has no rows for it."""
    models = list(dict.fromkeys(table.rows["model"].astype(str)))
    return name if name in models else next((m for m in models if same_model(m, name)), None)


def _paper_episodes(episodes: pd.DataFrame, name: str, table: PublishedTable) -> pd.DataFrame:
    """The episodes in the table's conditions: its fixed protocol/prior, the condition values it has
    (for any model) and the paper's budget for each structure and prior."""
    sel = episodes
    for col, v in _FIXED.get(name, {}).items():
        if col in sel:
            sel = sel[sel[col] == v]
    for col in table.conditions:
        if col in sel.columns and col != "structure":
            sel = sel[sel[col].astype(str).isin(set(table.rows[col].astype(str)))]
    if "structure" in table.conditions:
        sel = sel[sel["structure"].isin(set(table.rows["structure"]))]
    if len(sel) and {"budget", "structure", "prior"} <= set(sel.columns):
        paper = [default_budget(s, p) for s, p in zip(sel["structure"], sel["prior"])]
        sel = sel[sel["budget"].astype(int).to_numpy() == np.asarray(paper)]
    return sel


def _interval(values: list[float], metric: str) -> tuple[float, float]:
    vals = [v for v in values if not math.isnan(v)]
    return mean_ci(vals) if metric in _COUNTS else T.mean_interval(vals)


def _cells(episodes: pd.DataFrame, by: list[str], wanted: list[str]) -> pd.DataFrame:
    """Long rows (``by``, metric, value, low, high, n) of the metrics ``wanted`` per group of ``by``."""
    if episodes.empty:
        return pd.DataFrame(columns=[*by, *_RUN_COLUMNS])
    t = T.metric_table(episodes, by)
    rows = []
    for (_, r), (_, g) in zip(t.iterrows(), episodes.groupby(by, sort=True, dropna=False)):
        key = {c: r[c] for c in by}
        records = g.to_dict("records")
        for m in wanted:
            if m in ("SR", "CR", "AUC"):
                rows.append({**key, "metric": m, "value": r[m], "low": r[f"{m}_low"], "high": r[f"{m}_high"],
                             "n": int(r["cases"])})
            elif m in _PER_CASE:
                per_case = [_PER_CASE[m]([e]) for e in records]
                lo, hi = _interval(per_case, m)
                rows.append({**key, "metric": m, "value": r[m], "low": lo, "high": hi,
                             "n": sum(not math.isnan(v) for v in per_case)})
    return pd.DataFrame(rows, columns=[*by, *_RUN_COLUMNS])


def _average(cells: pd.DataFrame) -> pd.DataFrame:
    """Table 8's Avg. rows (2 agents): the mean of the parallel and sequential cells per metric, with
    the MOVER interval of the mean of two independent estimates."""
    rows = []
    two = cells[cells["n_agents"].astype(int) == 2]
    for m, g in two.groupby("metric", sort=False):
        g = g.set_index("structure")
        if not {"parallel", "sequential"} <= set(g.index):
            continue
        a, b = g.loc["parallel"], g.loc["sequential"]
        v = (a["value"] + b["value"]) / 2
        lo = v - math.hypot(a["value"] - a["low"], b["value"] - b["low"]) / 2
        hi = v + math.hypot(a["high"] - a["value"], b["high"] - b["value"]) / 2
        rows.append({"structure": "average", "n_agents": 2, "metric": m, "value": v, "low": lo, "high": hi,
                     "n": int(a["n"] + b["n"])})
    return pd.DataFrame(rows, columns=cells.columns)


def _run_rows(name: str, table: PublishedTable, episodes: pd.DataFrame, offline: bool) -> pd.DataFrame:
    """The run's long rows for one of Tables 8-13, restricted to the (structure, metric) pairs the
    table publishes."""
    by = list(table.conditions)
    sel = _paper_episodes(episodes, name, table)
    wanted = [m for m in dict.fromkeys(table.rows["metric"]) if not (offline and m in _COUNTS)]
    cells = _cells(sel, [c for c in by if c in sel.columns], wanted)
    if name == "table08" and len(cells):
        cells = pd.concat([cells, _average(cells)], ignore_index=True)
    published = set(zip(table.rows["structure"], table.rows["metric"]))
    keep = [(s, m) in published for s, m in zip(cells["structure"], cells["metric"])]
    return cells[keep].reset_index(drop=True)


def _table20_rows(episodes: pd.DataFrame, steps: pd.DataFrame | None) -> tuple[pd.DataFrame, str]:
    """Table 20's cells from the episodes in its conditions (:func:`table20_cells`), and why there are
    none when there are none."""
    from ...analysis import failure_indicators

    sel = _paper_episodes(episodes, "table20", published_tables()["table20"])
    if sel.empty or steps is None or steps.empty:
        return table20_cells(None), "this run has no parallel broadcast episodes with full priors and their steps"
    ind = failure_indicators(sel, steps[steps["episode_id"].isin(sel["episode_id"])])
    n_wg = int((ind["n_wrong_grabs"] > 0).sum())
    n_corr = int(((ind["n_wrong_grabs"] > 0) & ind["correction"].astype(bool)).sum())
    return table20_cells(ind), (f"this run's {len(ind)} parallel broadcast episodes hold {n_wg} with a wrong grab "
                                f"({n_corr} of them with a correction); the stratified analysis needs both groups")


def table20_cells(ind: pd.DataFrame | None) -> pd.DataFrame:
    """Table 20's cells as fractions (``structure``, ``wrong_grabs``, ``group``, metric, value, low,
    high, n) from failure indicators (:func:`collablab.analysis.failure_indicators`: ``structure``,
    ``success``, ``cr``, ``n_wrong_grabs``, ``correction``) through the analysis tail's
    :func:`collablab.analysis.correction_analysis`; empty without both groups among wrong-grab
    episodes on parallel tasks."""
    from ...analysis import correction_analysis, stratified_effect, top_code

    cols = ["structure", "wrong_grabs", "group", *_RUN_COLUMNS]
    if ind is None or ind.empty:
        return pd.DataFrame(columns=cols)
    ind = ind[ind["structure"] == "parallel"]
    corr = correction_analysis(ind, by="structure")
    if "parallel" not in corr.results:
        return pd.DataFrame(columns=cols)
    wg = ind[ind["n_wrong_grabs"] > 0].assign(success=lambda d: d["success"].astype(float),
                                               cr=lambda d: d["cr"].astype(float),
                                               correction=lambda d: d["correction"].astype(bool),
                                               stratum=lambda d: d["n_wrong_grabs"].map(top_code(4)))
    rows = []
    for r in corr.results["parallel"].table.itertuples(index=False):
        group = "correction" if r.group == "Corr." else "no_correction"
        part = wg[(wg["stratum"] == r.stratum) & (wg["correction"] == (group == "correction"))]
        if not len(part):
            continue
        k, n = float(part["success"].sum()), len(part)
        rows.append({"wrong_grabs": r.stratum, "group": group, "metric": "SR", "value": k / n,
                     "low": T.wilson(k, n)[0], "high": T.wilson(k, n)[1], "n": n})
        lo, hi = T.mean_interval(list(part["cr"]))
        rows.append({"wrong_grabs": r.stratum, "group": group, "metric": "CR", "value": float(part["cr"].mean()),
                     "low": lo, "high": hi, "n": n})
    for stratum in [*dict.fromkeys(wg["stratum"]), "adjusted"]:
        if stratum == "adjusted":  # the analysis tail's adjusted effect, in percentage points
            eff, k = corr.results["parallel"].effects.set_index("outcome"), 100.0
        else:
            part = wg[wg["stratum"] == stratum]
            if part["correction"].nunique() < 2:
                continue
            eff = stratified_effect(part, "correction", ["success", "cr"], "n_wrong_grabs", [stratum],
                                    bins=top_code(4)).effects.set_index("outcome")
            k = 1.0
        for metric, outcome in (("SR", "success"), ("CR", "cr")):
            e = eff.loc[outcome]
            rows.append({"wrong_grabs": stratum, "group": "delta", "metric": metric, "value": e["adjusted_delta"] / k,
                         "low": e["ci_low"] / k, "high": e["ci_high"] / k, "n": int(e["n_treated"] + e["n_control"])})
    out = pd.DataFrame(rows).assign(structure="parallel")
    order = {s: i for i, s in enumerate(("1", "2", "3", "4+", "adjusted"))}
    out = out.sort_values(["group", "wrong_grabs"], key=lambda c: c.map(order) if c.name == "wrong_grabs" else c,
                          kind="stable")
    return out[cols].reset_index(drop=True)


def _named(table: PublishedTable, suffix: str) -> PublishedTable:
    return replace(table, name=f"{table.name}_{suffix}") if suffix else table


def _compare(run: pd.DataFrame, table: PublishedTable, model: str, kind: str, why: str,
             suffix: str = "", figure: bool = True) -> Comparison | None:
    x, hue = _FIGURE.get(table.name, (None, None)) if figure else (None, None)
    rates = [m for m in dict.fromkeys(run["metric"]) if m not in _COUNTS]
    return compare(run, _named(table, suffix), model=model, kind=kind, on=list(table.conditions), rates=rates,
                   scale=100.0 if table.scale == "percent" or table.name == "table20" else 1.0, why=why,
                   x=x, hue=hue if hue in table.conditions else None)


def _calibrated(name: str, run: pd.DataFrame) -> pd.Series:
    """The run's cells in the heuristic profiles' calibration condition: Table 8, 1 agent, parallel, SR."""
    if name != "table08" or run.empty:
        return pd.Series(False, index=run.index)
    return (run["structure"] == "parallel") & (run["n_agents"].astype(int) == 1) & (run["metric"] == "SR")


def _single(profile: Any) -> str | None:
    """The one profile of a team (``"weak,weak"`` is ``weak``); None for a mixed team."""
    names = {p.strip() for p in str(profile).split(",")}
    return names.pop() if len(names) == 1 else None


@dataclass(frozen=True)
class _Team:
    """One team of the run and the paper model it is shown beside: ``label`` names it in file names
    when a run has several, ``why`` in every table of it."""

    label: str
    episodes: pd.DataFrame
    model: str
    kind: str
    calibrated: bool
    why: str


def _teams(episodes: pd.DataFrame, P: Mapping[str, Any], offline: bool) -> tuple[list[_Team], list[str]]:
    """The run's teams (module docstring: which model each is shown beside, and as what), and notes."""
    notes: list[str] = []
    if not offline:
        served = P.get("model") or None
        name = paper_model(served, PAPER_MODELS, P.get("paper_models"))
        mine = episodes[episodes["model"] == served] if "model" in episodes and served else episodes
        if name is None:
            why = (f"{REFERENCE_MODEL}, the paper's representative model (App. D.1, in each of Tables 8-13), "
                   "for orientation only")
            notes.append(f"Beside {why}.")
            return [_Team("", mine, REFERENCE_MODEL, "reference", False, f"beside {why}")], notes
        return [_Team("", mine, name, "reproduction", False, "")], notes
    policy = set(episodes["policy"]) if "policy" in episodes else set(episodes["backend"])
    if "heuristic" not in policy:
        notes.append(f"The {'/'.join(sorted(policy))} team reads the true state of the world: it is shown beside "
                     f"{REFERENCE_MODEL}, the paper's representative model (App. D.1), as a reference only.")
        return [_Team("", episodes, REFERENCE_MODEL, "reference", False,
                      f"an oracle team beside {REFERENCE_MODEL}")], notes
    names = list(P.get("profiles") or []) or [P.get("profile", "medium")]
    teams = []
    for p in names:
        single = _single(p)
        if single is None:
            notes.append(f"The mixed team `{p}` is left out: the paper's teams are one model each.")
            continue
        calibrated = single in PROFILE_MODELS
        model = PROFILE_MODELS.get(single, REFERENCE_MODEL)
        notes.append(f"The heuristic profile `{p}` is shown beside {model}" + (
            ", whose single-agent parallel SR in Table 8 its `drift` was set to match: that cell is a calibration, "
            "every other cell a reference (Table 9's 1-agent SR is the same run in the paper)." if calibrated else
            ", the paper's representative model (App. D.1), as a reference only."))
        why = (f"the {p} profile beside {model}, the model its lone-agent SR was calibrated on" if calibrated
               else f"the {p} profile beside {model}, the paper's representative model")
        teams.append(_Team(p if len(names) > 1 else "", episodes[episodes["profile"] == p], model, "reference",
                           calibrated, why))
    if "profile" in episodes and set(episodes["profile"]) - set(names):
        notes.append("Episodes of other teams (mixed teams) are left out.")
    return teams, notes


def beside_paper(name: str, episodes: pd.DataFrame, steps: pd.DataFrame, P: Mapping[str, Any],
                 run_dir: str | Path | None = None) -> Beside:
    """MECoBench notebook ``name``'s run beside the paper's Tables 8, 9, 11, 12, 13 and 20: every
    table whose conditions the episodes cover, for the run's model or profile (module docstring);
    reads only ``P``'s keys ``model``, ``paper_models``, ``profile``, ``profiles`` and ``budget``."""
    labels = sorted(set(episodes["backend"].astype(str))) if "backend" in episodes and len(episodes) else ["unknown"]
    offline = is_offline(",".join(labels))
    teams, notes = _teams(episodes, P, offline)
    served = None if offline else (P.get("model") or None)
    paper = None if offline else paper_model(served, PAPER_MODELS, P.get("paper_models"))
    out: list[Comparison] = []
    missing, spellings = [], set()
    published = published_tables()
    seen: set[tuple[Any, ...]] = set()
    for team in teams:
        for tname in ("table08", "table09", "table11", "table12", "table13"):
            table = published[tname]
            spelled = _spelling(table, team.model)
            if spelled is None:
                missing.append(table.table)
                continue
            spellings.add(spelled)
            run = _run_rows(tname, table, team.episodes, offline)
            keys = _cell_keys(tname, table, run, team.model)
            if keys <= seen:  # every cell already shown beside the same published value (Table 13's full priors)
                continue
            seen |= keys
            if team.calibrated:
                cal = _calibrated(tname, run)
                c = _compare(run[cal], table, spelled, "calibration", team.why,
                             "_".join(x for x in (team.label, "calibration") if x), figure=False)
                out += [c] if c is not None else []
                run = run[~cal]
            # Table 12 in two: effectiveness (SR, CR, AUC: its figure) and collaboration quality (§3.2)
            parts = ([(run[run["metric"].isin(_EFFECTIVENESS)], team.label, "effectiveness"),
                      (run[~run["metric"].isin(_EFFECTIVENESS)], "_".join(x for x in (team.label, "quality") if x),
                       "collaboration quality")] if tname == "table12" else [(run, team.label, "")])
            for part, label, what in parts:
                shown = replace(table, table=f"{table.table} ({what})") if what else table
                c = _compare(part, shown, spelled, team.kind, team.why, label)
                out += [c] if c is not None else []
    if teams:
        mine = pd.concat([t.episodes for t in teams], ignore_index=True) if len(teams) > 1 else teams[0].episodes
        run20, why20 = _table20_rows(mine, steps)
        t20 = published["table20"]
        why = ("the paper's cells pool its models (all); this run's pool its teams and team sizes "
               "(parallel, broadcast, wrong-grab episodes)")
        for grp, label, what in ((["correction", "no_correction"], "", "SR and CR with and without correction"),
                                 (["delta"], "delta", "correction's effect per stratum")):
            c = _compare(run20[run20["group"].isin(grp)], replace(t20, table=f"{t20.table} ({what})"), "all",
                         "reference", why, label)
            out += [c] if c is not None else []
        if not any(c.table.name.startswith("table20") for c in out) and _LEAD.get(name, ("",))[0] == "table20":
            notes.append(f"Table 20 (correction by wrong grabs) is not compared: {why20}.")
    if paper and missing:
        notes.append(f"The paper has no rows for {paper} in {', '.join(dict.fromkeys(missing))}.")
    if paper and len(spellings) > 1:
        notes.append(f"The paper prints {paper} as {' and as '.join(sorted(spellings))} in different tables.")
    if P.get("budget") is not None:
        notes.append("This run sets `budget`; only episodes with the paper's budget (60 steps on parallel tasks with "
                     "full or no-appearance priors, 80 otherwise) are compared: set `budget = None` to compare all.")
    lead = _LEAD.get(name, ())
    out.sort(key=lambda c: next((i for i, t in enumerate(lead) if c.table.name.startswith(t)), len(lead)))
    return Beside("mecobench", ",".join(labels), served, paper, out, notes, run_dir)


def _cell_keys(name: str, table: PublishedTable, run: pd.DataFrame, model: str) -> set[tuple[Any, ...]]:
    """Each run cell as (model, every condition incl. the table's fixed ones, metric): the same cell
    in two tables has the same key (the paper repeats its 2-agent broadcast cells in Tables 8-13)."""
    conds = [c for c in table.conditions if c in run.columns]
    return {(model, tuple(sorted({**_FIXED.get(name, {}), **{c: str(r[c]) for c in conds}}.items())), r["metric"])
            for _, r in run.iterrows()}
