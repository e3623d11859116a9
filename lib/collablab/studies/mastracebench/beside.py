"""Notebook 05 beside MASTraceBench's published tables (issue 25): the run's value of every metric the
paper prints, made the paper's way from the run's records, with its 95% interval and a verdict.

How each published metric maps to the run's (every value from :mod:`.metrics`, per method and task of
the main configuration, 3P+1R, unless said otherwise):

- **Table 2, TS** (0-100, the paper's scale and ours: ``scale=1``): :func:`~.metrics.task_scores` (static
  tasks: mean final-answer score over units and runs; games: mean episode score); interval: the t
  interval (``mean_ci``) of the units' scores, each unit's runs averaged first (a unit is one draw).
- **Table 2, CG** (points): :func:`~.metrics.collaboration_gains`; interval: the paired sign-flip
  bootstrap interval of :func:`~.report.cg_tests` (paired by unit and run), the notebook's own CG interval.
- **Table 9, OV and FPA** (percent; the run's fractions, ``scale=100``): :func:`~.metrics.output_validity`
  and :func:`~.metrics.final_proposal_agreement`; Wilson intervals over the outputs (OV: every initial
  and final proposal and final answer) and over the units with two or more proposers (FPA).
- **Tables 3 and 10, TC** (a multiple of Single-Agent's tokens): :func:`~.metrics.tc_multipliers`;
  interval: percentile bootstrap of the ratio of mean per-unit costs, the method's and Single-Agent's
  units resampled independently. Single-Agent's 1.00 holds by definition and is not compared.
- **Table 4, GI/GR/WI/SR** (percent; fractions, ``scale=100``): :func:`~.metrics.gab_table` and
  :func:`~.metrics.ar_table` per setting (``Records.by_setting``): GAB Improve/Regress of units,
  Surpass+Reach+Partial of weak agents, Regress of strong agents; Wilson intervals over units or
  agent-units. A run's homogeneous setting is the paper's row with the same proposers and rounds, named
  ``<P>P+<R>R`` on both sides (the paper's ``Main (3P+1R)`` is ``3P+1R``); a heterogeneous LLM team is
  the paper's Scale-Het. or Family-Het. row when its models are that team's members (:data:`TEAM_MODELS`,
  any order; a comparison of its own); the heuristic's mixed profiles (``agent_profiles``) stand beside
  Scale-Het. as a reference (they differ in capability, not in family).

Figure: Table 4's GI, GR, WI and SR over the settings, Int. Debate and MAPR in colour, the paper's
values dashed (:meth:`Beside.figure`). Table 2's twelve methods do not fit one categorical axis of
``published_plot`` legibly, so its tables have no figure here.

What the run cannot make: OptionGen's cells without ``race_path`` (the task is not run); Table 9's FPA
dashes, Single-Agent's CG and Agg. Debate's TC on MAPF and Gomoku (the paper prints none); Family-Het.
on the heuristic backend (it has no model families). Offline token counts are word counts, so offline
TC is a reference for the shape of the costs only.

Which model: the paper runs every method on **Qwen3-32B** (§4 Setup, "Evaluated Methods"). An LLM run
whose served model is Qwen3-32B (:data:`PAPER_MODELS`, or the notebook's ``paper_models``) is a
reproduction; any other model, and the heuristic backend, is a reference beside Qwen3-32B. The heuristic's
:class:`~.offline.MASProfile` values are design choices, tuned to no cell of the paper: nothing here is a
calibration. This module only reads records.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...analysis.beside import Beside, Comparison, compare, is_offline, paper_model
from ...analysis.findings import backend_of
from ...analysis.lift import wilson_ci
from ...analysis.published import PublishedTable, load_published
from ...analysis.significance import bootstrap_ci, mean_ci
from . import metrics as MT
from .experiments import Records
from .methods import METHODS
from .report import cg_tests
from .spec import TASK_ORDER

__all__ = ["PAPER_MODEL", "PAPER_MODELS", "PUBLISHED", "TEAM_MODELS", "beside_paper", "run_rows"]

#: The transcribed tables (``published/index.csv``).
PUBLISHED = Path(__file__).with_name("published")
#: The backbone of every method in the paper (§4 Setup), and the reference model of other runs.
PAPER_MODEL = "Qwen3-32B"
#: Served model id -> the paper's name, for the models the paper ran as the backbone (Tables 2, 3, 4, 9, 10).
PAPER_MODELS: dict[str, str] = {
    "Qwen/Qwen3-32B": PAPER_MODEL,
    "Qwen/Qwen3-32B-AWQ": PAPER_MODEL,
    "Qwen/Qwen3-32B-FP8": PAPER_MODEL,
    "Qwen/Qwen3-32B-GGUF": PAPER_MODEL,
    "qwen3:32b": PAPER_MODEL,
}
#: Served model id -> the name Table 4's heterogeneous teams give a member (Qwen3-{32B,14B,8B};
#: Qwen3-8B, Llama-3.1-8B-Instruct, Mistral-8B-Instruct); a team is its members joined by " + ".
TEAM_MODELS: dict[str, str] = {
    **PAPER_MODELS,
    "Qwen/Qwen3-14B": "Qwen3-14B",
    "Qwen/Qwen3-14B-AWQ": "Qwen3-14B",
    "qwen3:14b": "Qwen3-14B",
    "Qwen/Qwen3-8B": "Qwen3-8B",
    "Qwen/Qwen3-8B-AWQ": "Qwen3-8B",
    "qwen3:8b": "Qwen3-8B",
    "meta-llama/Llama-3.1-8B-Instruct": "Llama-3.1-8B-Instruct",
    "meta-llama/Meta-Llama-3.1-8B-Instruct": "Llama-3.1-8B-Instruct",
    "mistralai/Ministral-8B-Instruct-2410": "Mistral-8B-Instruct",
}
_TEAM_SEP = " + "
_RATES_T9 = ("OV", "FPA")
_RATES_T4 = ("GI", "GR", "WI", "SR")
_TC_TABLES = ("table03", "table10")
#: Table 4's figure axis: proposers × rounds.
_AXIS = "proposers × rounds"
#: How the run's values of each table are made (the line under its table).
_WHY = {
    "table02": "TS: mean final-answer score (0-100), t interval over units; CG: TS minus Single-Agent's on the "
               "same units, paired bootstrap interval",
    "table09": "OV: valid outputs; FPA: units whose final proposals all agree (Wilson intervals)",
    "tc": "tokens per unit over Single-Agent's (bootstrap interval)",
    "table04": "EvidenceChain; GI/GR: GAB Improve/Regress of units; WI: weak agents lifted; SR: strong agents' "
               "Regress (Wilson intervals); the paper's Main (3P+1R) is 3P+1R",
}


# -- the run's values ---------------------------------------------------------------------------

def _row(value: float, low: float, high: float, n: int, **keys: Any) -> dict[str, Any]:
    return {**keys, "value": float(value), "low": float(low), "high": float(high), "n": int(n)}


def _order(t: pd.DataFrame) -> pd.DataFrame:
    """Rows in the paper's order: methods as Table 2 lists them, then tasks as Table 1 does."""
    if t.empty:
        return t
    m = {k: i for i, k in enumerate(METHODS)}
    k = {x: i for i, x in enumerate(TASK_ORDER)}
    return (t.assign(_m=t["method"].map(m).fillna(len(m)), _k=t["task"].map(k).fillna(len(k)))
            .sort_values(["_m", "_k"], kind="stable").drop(columns=["_m", "_k"]).reset_index(drop=True))


def _ts_cg(rec: Records, n_resamples: int) -> pd.DataFrame:
    """Table 2's TS and CG per method and task (see the module docstring for the intervals)."""
    main, games = rec.main, rec.games()
    scores = MT.task_scores(main, games)
    units = rec.episodes[rec.episodes["episode_key"].isin(rec.main_keys)]
    per_unit = {k: g.groupby("unit", sort=False)["score"].mean() for k, g in units.groupby(["method", "task"])}
    rows = []
    for (method, task), ts in scores.items():
        u = per_unit[(method, task)]
        lo, hi = mean_ci(u)
        rows.append(_row(ts, max(lo, 0.0), min(hi, 100.0), len(u), method=method, task=task, metric="TS"))
    if any(m == MT.SINGLE_AGENT for m, _ in scores):
        gains = MT.collaboration_gains(scores)
        tests = cg_tests(rec, n_resamples)
        sf = tests[tests["test"] == "sign_flip"] if len(tests) else pd.DataFrame(columns=["contrast", "task"])
        ci = {(c.rsplit(" vs ", 1)[0], t): (lo, hi, n)
              for c, t, lo, hi, n in zip(sf["contrast"], sf["task"], sf.get("ci_low", []), sf.get("ci_high", []),
                                         sf.get("n", []))}
        for (method, task), cg in gains.items():
            lo, hi, n = ci.get((method, task), (math.nan, math.nan, 0))
            rows.append(_row(cg, lo, hi, n, method=method, task=task, metric="CG"))
    return _order(pd.DataFrame(rows, columns=["method", "task", "metric", "value", "low", "high", "n"]))


def _by_method_task(trajectories: list[Any]) -> dict[tuple[str, str], list[Any]]:
    out: dict[tuple[str, str], list[Any]] = {}
    for t in trajectories:
        out.setdefault((t.method, t.task), []).append(t)
    return out


def _ov_fpa(rec: Records) -> pd.DataFrame:
    """Table 9's OV and FPA per method and task, fractions with Wilson intervals."""
    rows = []
    for (method, task), ts in _by_method_task(rec.main).items():
        n = sum(1 + 2 * len(t.proposers) for t in ts)  # the outputs eq. 23 counts
        k = round(MT.output_validity(ts) * n)
        rows.append(_row(k / n, *wilson_ci(k, n), n, method=method, task=task, metric="OV"))
        if MT.final_proposal_agreement(ts) is not None:
            flags = [f for f in map(MT.final_agreement, ts) if f is not None]
            rows.append(_row(sum(flags) / len(flags), *wilson_ci(sum(flags), len(flags)), len(flags),
                             method=method, task=task, metric="FPA"))
    return _order(pd.DataFrame(rows, columns=["method", "task", "metric", "value", "low", "high", "n"]))


def _ratio_of_means(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) / np.mean(y, axis=axis)


def _tc(rec: Records, n_resamples: int) -> pd.DataFrame:
    """Tables 3 and 10's TC multipliers per method and task, with bootstrap intervals."""
    groups = _by_method_task(rec.main)
    mult = MT.tc_multipliers(rec.main) if any(m == MT.SINGLE_AGENT for m, _ in groups) else {}
    rows = []
    for (method, task), tc in mult.items():
        if method == MT.SINGLE_AGENT:
            continue
        cost = [MT.token_cost(t) for t in groups[(method, task)]]
        base = [MT.token_cost(t) for t in groups[(MT.SINGLE_AGENT, task)]]
        b = bootstrap_ci(cost, base, statistic=_ratio_of_means, n_resamples=n_resamples)
        rows.append(_row(tc, b.ci_low, b.ci_high, len(cost), method=method, task=task, metric="TC"))
    return _order(pd.DataFrame(rows, columns=["method", "task", "metric", "value", "low", "high", "n"]))


def _refinement(trajectories: list[Any]) -> list[dict[str, Any]]:
    """GI/GR/WI/SR (Table 4) per method of ``trajectories``, fractions with Wilson intervals."""
    gt, at = MT.gab_table(trajectories), MT.ar_table(trajectories)
    rows = []
    for method, task in gt.index:
        cells = [("GI", gt.loc[(method, task), "Improve"], gt.loc[(method, task), "n"]),
                 ("GR", gt.loc[(method, task), "Regress"], gt.loc[(method, task), "n"])]
        for group, metric, labels in (("weak", "WI", ["Surpass", "Reach", "Partial"]), ("strong", "SR", ["Regress"])):
            if (method, task, group) in at.index:
                a = at.loc[(method, task, group)]
                cells.append((metric, float(a[labels].sum()), a["n"]))
        for metric, pct, n in cells:
            n = int(n)
            k = round(float(pct) * n / 100)
            rows.append(_row(k / n, *wilson_ci(k, n), n, method=method, task=task, metric=metric))
    return rows


def _settings(rec: Records) -> pd.DataFrame:
    """Table 4's cells per setting the run has: ``setting`` (the run's label), ``paper_setting`` (the
    paper's row it is the same configuration as), ``team`` (the models or profiles of a heterogeneous
    team, else empty), then method, task, metric and the value with its interval."""
    e = rec.episodes.drop_duplicates("setting").set_index("setting")
    rows = []
    for setting, trajs in rec.by_setting().items():
        r = e.loc[setting]
        team = next((str(v) for v in (r.get("models"), r.get("agent_profiles")) if isinstance(v, str) and v), "")
        paper = "" if team else f"{int(r['proposers'])}P+{int(r['rounds'])}R"
        kind = "models" if isinstance(r.get("models"), str) and r.get("models") else "profiles" if team else ""
        rows += [{"setting": setting, "paper_setting": paper, "team": team, "team_kind": kind, **x}
                 for x in _refinement(trajs)]
    cols = ["setting", "paper_setting", "team", "team_kind", "method", "task", "metric", "value", "low", "high", "n"]
    return pd.DataFrame(rows, columns=cols)


def run_rows(episodes: pd.DataFrame, steps: pd.DataFrame, P: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """The run's long rows (conditions, ``metric``, ``value``, ``low``, ``high``, ``n``) per kind of
    published table: ``table02`` (TS, CG), ``table09`` (OV, FPA), ``tc`` (Tables 3 and 10) and
    ``table04`` (per setting); rates as fractions. Resamples: ``P["n_resamples"]`` (default 10,000)."""
    rec = Records(episodes, steps)
    n = int(P.get("n_resamples") or 10_000)
    return {"table02": _ts_cg(rec, n), "table09": _ov_fpa(rec), "tc": _tc(rec, n), "table04": _settings(rec)}


# -- which of the paper's rows ------------------------------------------------------------------

def _members(team: str) -> frozenset[str]:
    return frozenset(m.strip() for m in team.split(_TEAM_SEP))


def _paper_team(team: str, kind: str, extra: Mapping[str, str], t4: PublishedTable) -> str | None:
    """Table 4's team (its ``model`` value) that a run's heterogeneous team is: the same members
    (served ids read by :data:`TEAM_MODELS` and ``paper_models``, in any order) for models; for the
    heuristic's mixed profiles, the scale-heterogeneous team (Scale-Het.)."""
    teams = {str(m): str(s) for m, s in zip(t4.rows["model"], t4.rows["setting"]) if _TEAM_SEP in str(m)}
    if kind == "profiles":
        return next((m for m, s in teams.items() if s.startswith("Scale")), None)
    names = [paper_model(x.strip(), TEAM_MODELS, extra) for x in team.split(",")]
    if None in names:
        return None
    return next((m for m in teams if _members(m) == frozenset(names)), None)


def _homogeneous(t4: PublishedTable, model: str) -> PublishedTable:
    """Table 4's rows of ``model`` (the backbone's homogeneous settings), each setting named by its
    proposers and rounds (``Main (3P+1R)`` as ``3P+1R``), as the run's settings are."""
    rows = t4.rows[t4.rows["model"] == model]
    return replace(t4, rows=rows.assign(setting=[f"{p}P+{r}R" for p, r in zip(rows["proposers"], rows["rounds"])]))


def _setting_table(t4: PublishedTable, setting: str, model: str) -> PublishedTable:
    """Table 4 narrowed to one heterogeneous setting, named apart (its own CSV under ``tables/``)."""
    slug = "".join(ch if ch.isalnum() else "_" for ch in setting.lower()).strip("_")
    return replace(t4, name=f"{t4.name}_{slug}", table=f"{t4.table} ({setting})",
                   rows=t4.rows[t4.rows["model"] == model])


def beside_paper(name: str, episodes: pd.DataFrame, steps: pd.DataFrame, P: Mapping[str, Any],
                 run_dir: str | Path | None = None) -> Beside:
    """Notebook ``name``'s run beside MASTraceBench's Tables 2, 9, 3, 10 and 4 (module docstring): a
    reproduction for an LLM run of Qwen3-32B, else a reference beside Qwen3-32B. Reads only the
    records and ``P``'s ``model``, ``paper_models`` and ``n_resamples``."""
    tables = load_published(PUBLISHED)
    backend = backend_of(episodes)
    offline = is_offline(backend)
    extra = dict(P.get("paper_models") or {})
    served = None
    if not offline:
        models = episodes["model"].dropna() if "model" in episodes else pd.Series(dtype=object)
        served = P.get("model") or (str(models.iloc[0]) if len(models) else None)
    named = None if offline else paper_model(served, PAPER_MODELS, extra)
    ran = set(tables["table02"].rows["model"])
    model = named if named in ran else None
    kind = "reproduction" if model else "reference"
    beside = model or PAPER_MODEL
    notes = []
    if offline:
        notes.append(f"Reference model: {PAPER_MODEL}, the backbone of every method in the paper (§4 Setup). The "
                     "heuristic's capability profiles are design choices tuned to no cell of the paper, so no row "
                     "below is a calibration; its token counts are word counts.")
    elif not model:
        also = f" `{served}` reads as the paper's {named}, which ran only in Table 4's teams." if named else ""
        notes.append(f"Shown beside {PAPER_MODEL}, the backbone of every method in the paper (§4 Setup).{also}")
    run = run_rows(episodes, steps, P)
    comps: list[Comparison | None] = []
    comps.append(compare(run["table02"], tables["table02"], model=beside, kind=kind, on=["method", "task"],
                         why=_WHY["table02"], x=None))
    comps.append(compare(run["table09"], tables["table09"], model=beside, kind=kind, on=["method", "task"],
                         rates=_RATES_T9, scale=100, why=_WHY["table09"], x=None))
    tc_why = _WHY["tc"] + ("; offline tokens are word counts" if offline else "")
    for key in _TC_TABLES:
        t = tables[key]
        rows = run["tc"][run["tc"]["task"].isin(set(t.rows["task"]))]
        comps.append(compare(rows, t, model=beside, kind=kind, on=["method", "task"], why=tc_why, x=None))
    t4, s4 = tables["table04"], run["table04"]
    cols = ["method", "task", "metric", "value", "low", "high", "n"]
    homo = s4[s4["team"] == ""].assign(setting=lambda d: d["paper_setting"])
    settings = compare(homo[["setting", *cols]], _homogeneous(t4, beside), model=beside, kind=kind,
                       on=["setting", "method"], rates=_RATES_T4, scale=100,
                       why=_WHY["table04"], x=_AXIS, hue="method", panel="metric")
    if settings is not None:  # the figure's axis: "3×1" fits a panel where "3P+1R" does not (not a table column)
        settings.rows[_AXIS] = settings.rows["setting"].str.replace(r"^(\d+)P\+(\d+)R$", r"\1×\2", regex=True)
    comps.append(settings)
    for (setting, team, team_kind), rows in s4[s4["team"] != ""].groupby(["setting", "team", "team_kind"], sort=False):
        paper_team = _paper_team(team, team_kind, extra, t4)
        if paper_team is None:
            notes.append(f"Table 4's {setting} ({team}): the paper ran no such team; not compared.")
            continue
        label = str(t4.rows.loc[t4.rows["model"] == paper_team, "setting"].iloc[0])
        team_kind_of = "reproduction" if team_kind == "models" and not offline else "reference"
        why = f"the paper's {label} team" + (": the heuristic's mixed profiles stand in for it"
                                             if team_kind == "profiles" else "")
        comps.append(compare(rows.assign(setting=label)[["setting", *cols]], _setting_table(t4, label, paper_team),
                             model=paper_team, kind=team_kind_of, on=["setting", "method"], rates=_RATES_T4,
                             scale=100, why=why, x=None))
    return Beside(name, backend, served, model, [c for c in comps if c is not None], notes, run_dir)
