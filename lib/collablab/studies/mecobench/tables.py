"""MECoBench's result tables in the paper's layouts (§3.2 metrics per group, Tables 3, 8-16,
Figs. 7b, 10, 32, 36) and the long tables :mod:`.findings` reads, from episode records (and the
failure indicators of :func:`collablab.analysis.failure_indicators`); pure functions of the
records. Every table keeps a ``backend`` column so that what is said about it can name it."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from ...analysis.lift import wilson_ci
from ...analysis.significance import mean_ci
from . import metrics

METRIC_COLUMNS = ["SR", "CR", "AUC", "DOL", "CAR", "HFR", "SpatialErr", "TokensPerStep"]


def wilson(successes: float, n: float) -> tuple[float, float]:
    """Wilson score interval (95%) of a binomial rate, :func:`~collablab.analysis.lift.wilson_ci`
    (statsmodels; a rate of a mean share passes a fractional count); NaN bounds when ``n`` is 0. SR is a share of cases (§3.2), so its
    cells carry this interval (``SR_low``, ``SR_high``)."""
    return wilson_ci(successes, n) if n else (float("nan"), float("nan"))


def rate_difference(a: tuple[float, float, float], b: tuple[float, float, float]) -> tuple[float, float, float]:
    """``a - b`` of two rates given as (rate, Wilson low, Wilson high), with Newcombe's hybrid score
    interval (method 10, from the two Wilson intervals; independent samples, so conservative for the
    paired tasks of a MECoBench grid)."""
    (p1, l1, u1), (p2, l2, u2) = a, b
    d = p1 - p2
    return d, d - float(np.hypot(p1 - l1, u2 - p2)), d + float(np.hypot(u1 - p1, p2 - l2))


def _with_wilson(row: dict[str, Any], col: str = "SR", n: str = "cases") -> dict[str, Any]:
    """``row`` with ``<col>_low``/``<col>_high`` (Wilson) right after ``col``."""
    lo, hi = wilson(row[col] * row[n], row[n]) if row[n] and not pd.isna(row[col]) else (float("nan"),) * 2
    return _after(row, col, {f"{col}_low": lo, f"{col}_high": hi})


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """95% interval of the mean of per-case values on 0-1 (CR, AUC: §3.2): the t interval
    (:func:`~collablab.analysis.significance.mean_ci`) held to [0, 1]; NaN bounds with fewer than
    two cases."""
    lo, hi = mean_ci(values)
    return (lo, hi) if np.isnan(lo) else (max(0.0, lo), min(1.0, hi))


def _per_case(records: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    """Each case's CR and Step-CR AUC (what the metrics average, §3.2)."""
    return {"CR": [r["completed"] / r["n_subgoals"] for r in records],
            "AUC": [metrics.episode_auc(r["progress"], r["n_agents"], r["budget"]) for r in records]}


def metric_table(episodes: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """MECoBench metrics (§3.2) per group, with the number of cases, SR's 95% Wilson interval
    (``SR_low``, ``SR_high``), the 95% t intervals of CR and AUC (``CR_low`` ... :func:`mean_interval`)
    and the backend."""
    rows = []
    for key, g in episodes.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        records = g.to_dict("records")
        s = metrics.summary(records)
        row = _with_wilson({**dict(zip(by, key)), "cases": int(s.pop("n")), **s,
                            "backend": ",".join(sorted(g["backend"].unique()))})
        for col, values in _per_case(records).items():
            row = _after(row, col, dict(zip((f"{col}_low", f"{col}_high"), mean_interval(values))))
        rows.append(row)
    return pd.DataFrame(rows)


def _after(row: dict[str, Any], col: str, extra: dict[str, Any]) -> dict[str, Any]:
    """``row`` with ``extra`` right after ``col``."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        out[k] = v
        if k == col:
            out.update(extra)
    return out


def _backends(s: pd.Series) -> str:
    return ",".join(sorted(s.astype(str).unique()))


def by_objects(episodes: pd.DataFrame, by: str = "n_agents", groups: Sequence[str] = ()) -> pd.DataFrame:
    """SR (with its Wilson interval) and CR by number of target objects and ``by`` (Table 10 / Figs.
    7b, 36), within ``groups`` (e.g. ``["structure", "prior"]``)."""
    keys = [*groups, "n_subgoals", by]
    agg: dict[str, Any] = dict(SR=("success", "mean"), CR=("cr", "mean"), cases=("success", "size"))
    if "backend" in episodes.columns:
        agg["backend"] = ("backend", _backends)
    t = episodes.groupby(keys).agg(**agg).reset_index()
    t = pd.DataFrame([_with_wilson(r) for r in t.to_dict("records")]) if len(t) else t
    return t.rename(columns={"n_subgoals": "objects"})


def fitted_trends(table: pd.DataFrame, by: str = "n_agents", y: str = "SR", groups: Sequence[str] = ()) -> pd.DataFrame:
    """Least-squares line of ``y`` on the object count per ``by`` within ``groups`` (Fig. 7b's trend
    lines); also the object counts it spans, the cases it rests on and the backend."""
    rows = []
    for key, g in table.groupby([*groups, by], sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip([*groups, by], key))
        if g["objects"].nunique() < 2:
            row.update(slope=float("nan"), intercept=float("nan"))
        else:
            slope, intercept = np.polyfit(g["objects"], g[y], 1)
            row.update(slope=float(slope), intercept=float(intercept))
        row.update(min_objects=int(g["objects"].min()), max_objects=int(g["objects"].max()))
        if "cases" in g.columns:
            row["cases"] = int(g["cases"].sum())
        if "backend" in g.columns:
            row["backend"] = _backends(g["backend"])
        rows.append(row)
    return pd.DataFrame(rows)


def objects_table(episodes: pd.DataFrame, structure: str, protocol: str = "broadcast", prior: str | None = None,
                  by: str = "n_agents") -> pd.DataFrame:
    """Fig. 36 data: SR and CR by number of objects and team size for one structure and protocol
    (and one prior, or every prior of the run as a column)."""
    sel = episodes[(episodes.structure == structure) & (episodes.protocol == protocol)]
    if prior is not None:
        sel = sel[sel.prior == prior]
    return by_objects(sel, by, ["structure", "prior"])


def objects_trends(objects: pd.DataFrame, by: str = "n_agents") -> pd.DataFrame:
    """Fig. 36 / 7b trend lines of an :func:`objects_table`: per team size, the slope of SR per object
    in percentage points (and the intercept in %: SR is shown as a percentage)."""
    t = fitted_trends(objects, by, "SR", ["structure", "prior"])
    return t.assign(slope=t["slope"] * 100, intercept=t["intercept"] * 100) if len(t) else t


def wide(table: pd.DataFrame, index: str, columns: str, values: Sequence[str] = ("SR",),
         label: Callable[[Any], str] | None = None) -> pd.DataFrame:
    """Paper-style wide layout of a long table, conditions as columns: one row per ``index`` value,
    a column ``"<condition> <value>"`` per condition and value (``label(condition)`` instead when
    given and there is one value), with its interval bounds
    (``..._low``/``..._high``) where the long table has them (the display merges them into one cell)."""
    out = pd.DataFrame(index=pd.Index(sorted(table[index].dropna().unique()), name=index))
    for c in table[columns].dropna().unique():
        part = table[table[columns] == c].set_index(index)
        for v in values:
            for suffix in ("", "_low", "_high"):
                if f"{v}{suffix}" in part.columns:
                    name = label(c) if label is not None and len(values) == 1 else f"{c} {v}"
                    out[f"{name}{suffix}"] = part[f"{v}{suffix}"]
    if "backend" in table.columns:
        out["backend"] = _backends(table["backend"])
    return out.reset_index()


# -- the notebooks' tables and figures (each a pure function of the records) -----------------------
_WITH_INTERVALS = ("SR", "SR_low", "SR_high", "CR", "CR_low", "CR_high", "AUC", "AUC_low", "AUC_high")


def table8(episodes: pd.DataFrame) -> pd.DataFrame:
    """Table 8: one vs two agents with broadcast, per structure."""
    sel = episodes[(episodes.protocol == "broadcast") & episodes.n_agents.isin([1, 2])]
    t = metric_table(sel, ["structure", "n_agents"])
    return t[["structure", "n_agents", "cases", *_WITH_INTERVALS, "HFR", "backend"]]


def table9(episodes: pd.DataFrame) -> pd.DataFrame:
    """Table 9: parallel tasks, SR by team size (rows) and protocol (columns), with 95% intervals."""
    par = episodes[episodes.structure == "parallel"]
    return wide(metric_table(par, ["n_agents", "protocol"]), "n_agents", "protocol", ["SR"])


def table10(episodes: pd.DataFrame) -> pd.DataFrame:
    """Table 10 / Fig. 7b data: SR and CR by number of objects and team size (parallel, broadcast)."""
    return by_objects(episodes[(episodes.structure == "parallel") & (episodes.protocol == "broadcast")], "n_agents")


def table11(episodes: pd.DataFrame) -> pd.DataFrame:
    """Table 11: two agents with (broadcast) and without (isolated) communication, per structure."""
    sel = episodes[(episodes.n_agents == 2) & episodes.protocol.isin(["broadcast", "isolated"])]
    t = metric_table(sel, ["structure", "protocol"])
    return t[["structure", "protocol", "cases", *_WITH_INTERVALS, "CAR", "HFR", "backend"]]


def scaling_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Tables 9 and 15 / Figs. 7a, 8b, 9b, 13a in long form: metrics per structure, prior, protocol
    and team size (one row each)."""
    return metric_table(episodes, ["structure", "prior", "protocol", "n_agents"])


def modes_table(episodes: pd.DataFrame, n_agents: int = 2) -> pd.DataFrame:
    """Table 12 / Fig. 8a: every protocol with ``n_agents`` agents, per structure."""
    return metric_table(episodes[episodes.n_agents == n_agents], ["structure", "protocol"])


def memory_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Figs. 10 and 31: shared memory vs broadcast per structure and team size (SR, AUC, tokens)."""
    sel = episodes[episodes.protocol.isin(["broadcast", "shared_memory"])]
    sizes = set(sel[sel.protocol == "shared_memory"].n_agents)
    return metric_table(sel[sel.n_agents.isin(sizes)], ["structure", "n_agents", "protocol"])


def team_table(episodes: pd.DataFrame, who: str) -> pd.DataFrame:
    """Fig. 32: metrics per team (the ``who`` column: ``profile`` or ``model``, leader first)."""
    return metric_table(episodes, [who])


def priors_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Tables 13-16 / Fig. 35 in long form: metrics per prior, budget and team size."""
    return metric_table(episodes, ["prior", "budget", "n_agents"])


def same_team(episodes: pd.DataFrame, backend: str, profile: str, model: str) -> pd.Series:
    """Episodes of the notebook's own team: its heuristic profile, or its model for LLM backends."""
    return episodes.model == model if backend == "llm" else episodes.profile == profile


def team_column(backend: str) -> str:
    """Which record column names a team's members: ``profile`` (heuristic, oracle) or ``model``."""
    return "model" if backend == "llm" else "profile"


def table3_long(episodes: pd.DataFrame) -> pd.DataFrame | None:
    """Table 3 with one row per prior (``prior``, SRs, ``relative gain`` = (SR2 - SR1) / SR1, NaN when
    SR1 is 0, cases and backend); None when the run has not both team sizes."""
    g = episodes[episodes.n_agents.isin([1, 2])].groupby(["prior", "n_agents"])
    sr, cases = g["success"].mean().unstack(), g["success"].size().unstack()
    if 1 not in sr or 2 not in sr:
        return None
    gain = ((sr[2] - sr[1]) / sr[1].where(sr[1] > 0)).astype(float)
    backend = episodes.groupby("prior")["backend"].agg(_backends)
    return pd.DataFrame({"SR 1 agent": sr[1], "SR 2 agents": sr[2], "relative gain": gain,
                         "cases 1 agent": cases[1], "cases 2 agents": cases[2],
                         "backend": backend.reindex(sr.index)}).reset_index()


def failure_rates(ind: pd.DataFrame, by: Sequence[str],
                  indicators: Sequence[str] = ("false_completion", "dup_grab", "wrong_grab")) -> pd.DataFrame:
    """Table 22 / Fig. 37 in long form, from :func:`collablab.analysis.failure_indicators`: per group of
    ``by`` (plus an ``"all"`` row per indicator) the episodes, how many show the indicator, its
    ``rate`` (share), and SR with and without it."""
    rows = []
    groups = [(k if isinstance(k, tuple) else (k,), g) for k, g in ind.groupby(list(by), sort=True)]
    for key, g in [(("all",) * len(by), ind), *groups]:
        for name in indicators:
            flag = g[name].astype(bool)
            ok = g["success"].astype(float)
            rows.append({**dict(zip(by, key)), "indicator": name, "episodes": len(g), "with": int(flag.sum()),
                         "rate": float(flag.mean()) if len(g) else float("nan"),
                         "SR with": float(ok[flag].mean()) if flag.any() else float("nan"),
                         "SR without": float(ok[~flag].mean()) if (~flag).any() else float("nan"),
                         "backend": _backends(g["backend"])})
    return pd.DataFrame(rows)


def sr_with_without(ind: pd.DataFrame, flags: Sequence[str]) -> pd.DataFrame:
    """SR (with its Wilson interval) of the episodes with and without each indicator of ``flags``
    (columns of :func:`collablab.analysis.failure_indicators`: ``false_completion``, ``coord_query``
    ...; §6.2, Tables 18, 22): one row per indicator and ``has`` (True, False) with episodes."""
    rows = []
    for name in flags:
        flag = ind[name].astype(bool)
        for has in (True, False):
            part = ind[flag == has]
            if len(part):
                rows.append(_with_wilson({"indicator": name, "has": has, "cases": len(part),
                                          "SR": float(part["success"].astype(float).mean()),
                                          "backend": _backends(part["backend"])}))
    return pd.DataFrame(rows)


def correction_rates(ind: pd.DataFrame, by: str) -> pd.DataFrame:
    """Self-correction per group of ``by`` and wrong-grab status (appendix E.2, Table 19): episodes
    with / without a wrong grab, how many of them carry a self-correction message, and that share."""
    rows = []
    for key, g in ind.groupby(by, sort=True):
        for wg in (True, False):
            part = g[g["wrong_grab"].astype(bool) == wg]
            n_corr = int(part["correction_self"].astype(bool).sum())
            rows.append({by: key, "wrong_grab": wg, "episodes": len(part), "self_corrected": n_corr,
                         "rate": n_corr / len(part) if len(part) else float("nan"),
                         "backend": _backends(g["backend"])})
    return pd.DataFrame(rows)


def with_pairs(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episodes with a ``pair`` column (task and team size): what paired tests match on."""
    return episodes.assign(pair=episodes.task_id + "/n" + episodes.n_agents.astype(str))


def message_examples(tagged: pd.DataFrame, codes: Sequence[str], max_chars: int = 90) -> pd.DataFrame:
    """One example message per behaviour code (Table 17 style), or "(never observed)"; messages cut
    to ``max_chars`` characters (with "…")."""
    def cut(m: str) -> str:
        return m if len(m) <= max_chars else m[:max_chars - 1].rstrip() + "…"

    return pd.DataFrame({"behaviour": list(codes),
                         "example": [cut(str(tagged.loc[tagged[c], "message"].iloc[0])) if tagged[c].any()
                                     else "(never observed)" for c in codes]})
