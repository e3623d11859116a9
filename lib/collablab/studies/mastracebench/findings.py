"""Sentences about a MASTraceBench run, written from its result tables (mastracebench.txt §4-5).

Each function takes long result tables (one row per method x task; built by :mod:`.report`) and
returns a :class:`~collablab.analysis.findings.Finding` whose wording follows the numbers it quotes;
the notebook groups them by ``shown`` (as in the paper / not shown by this run / too few units to
tell) and names the backend once, in its headline. Every docstring states the paper's claim it
checks and when each wording is chosen.

When a finding is too few units to tell (the documented rule):

- a cell with fewer than :data:`MIN_UNITS` units per method is too few to tell (at the default size,
  every game: Gomoku, Negotiation and TacticDuel);
- a finding on a CG rests on its paired bootstrap 95% interval (``CG_low``/``CG_high``, from the
  analysis tail's sign-flip test) through :func:`~collablab.analysis.findings.verdict`;
- a finding on a point comparison without an interval (which method is top, CLEARS against CLEARS
  w/o CCE) reads only tasks with at least :data:`MIN_UNITS` units per method;
- label shares (GAB, AR) are pooled over method-task cells and read as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...analysis.findings import Finding, Quote, quote, select_rows, verdict
from .metrics import SINGLE_AGENT
from .spec import TASK_NAMES

__all__ = ["INTERACTIVE", "MIN_UNITS", "al_follows_agreement", "al_fpa_correlation", "cce_helps",
           "clears_top_cg", "gain_through_interaction", "gains_over_single", "improve_is_rare", "interactive_means",
           "loss_through_regress", "proposal_score_tracks_ts", "regress_across_settings", "token_cost_ranking",
           "weak_lifted_strong_kept"]

#: Methods whose proposers see each other's proposals or feedback before the answer (§4's
#: "interactive protocols"); their gains can come from interaction, not only from selection.
INTERACTIVE = ("Int. Debate", "Agg. Debate", "Adv. Debate", "Reflection", "MAPR", "AgentVerse")
#: A method-task cell with fewer units is too few units to tell (interval or not).
MIN_UNITS = 30


def _name(task: str) -> str:
    return TASK_NAMES.get(task, task)


def _missing(claim: str, what: str) -> Finding:
    return Finding(claim, f"Not checked ({claim}): this run has {what}.", None)


def _q(t: pd.DataFrame, table: str, method: str, task: str, column: str, fmt: str = "{:.2f}") -> Quote | None:
    return quote(t, table, {"method": method, "task": task}, column, fmt)


def _cg(t2: pd.DataFrame, method: str, task: str) -> tuple[list[Quote], str]:
    """A cell's CG with its interval, as quotes and as text: ``+8.2 [3.1, 13.0]``."""
    cg, lo, hi = (_q(t2, "table2", method, task, c, f) for c, f in (("CG", "{:+.1f}"), ("CG_low", "{:.1f}"),
                                                                    ("CG_high", "{:.1f}")))
    if cg is None:
        return [], "missing"
    if lo is None or hi is None:
        return [cg], cg.text
    return [cg, lo, hi], f"{cg.text} [{lo.text}, {hi.text}]"


def _cells(t2: pd.DataFrame) -> pd.DataFrame:
    """Method-task cells with a CG (Single-Agent left out)."""
    return t2[t2["method"] != SINGLE_AGENT].dropna(subset=["CG"])


def _verdict(row: pd.Series, sign: int) -> bool | None:
    v = verdict(row["CG_low"], row["CG_high"], sign, n=int(row["n"]), min_n=MIN_UNITS)
    return None if v is None else bool(v)


def gains_over_single(t2: pd.DataFrame) -> Finding:
    """§5 Observation 1 (Table 2): interactive multi-proposer methods gain more over Single-Agent than
    the other methods. Counts the cells whose CG interval lies above 0 (with at least
    :data:`MIN_UNITS` units) among interactive and other methods; shown when the interactive share is
    higher, not shown when it is not, too few units to tell when no cell has an interval."""
    claim = "interactive methods gain over Single-Agent more often than the others"
    rows = _cells(t2)
    rows = rows[(rows["n"] >= MIN_UNITS) & rows["CG_low"].notna()]
    if not len(rows):
        return Finding(claim, f"Where methods gain over Single-Agent is too few units to tell: no method-task cell "
                              f"has {MIN_UNITS} units and a CG interval.", None)
    inter = rows["method"].isin(INTERACTIVE)
    up = rows["CG_low"] > 0
    a, n_a = int((up & inter).sum()), int(inter.sum())
    b, n_b = int((up & ~inter).sum()), int((~inter).sum())
    down = int((rows["CG_high"] < 0).sum())
    counts = (f"interactive methods in {a} of {n_a} method-task cells, the other methods in {b} of {n_b} "
              f"({down} cells lose)")
    if not n_a or not n_b:
        return Finding(claim, f"Interactive and other methods are too few to compare: CG intervals lie above 0 for "
                              f"{counts}.", None)
    if a / n_a > b / n_b:
        return Finding(claim, f"Interactive methods gain over Single-Agent more often than the others: the CG "
                              f"interval lies above 0 for {counts}.", True)
    return Finding(claim, f"Interactive methods do not gain over Single-Agent more often than the others: the CG "
                          f"interval lies above 0 for {counts}.", False)


def gain_through_interaction(t2: pd.DataFrame, gab: pd.DataFrame) -> Finding:
    """§5 Observations 1-2: an interactive method can gain over Single-Agent. Reads the interactive
    cell with the highest lower CG bound among cells with at least :data:`MIN_UNITS` units
    (:func:`verdict` on its interval) and says where its gain comes from: GAB Improve (beyond the
    best initial proposal) against OptKeep (keeping an optimal one)."""
    claim = "an interactive method gains over Single-Agent"
    rows = _cells(t2)
    rows = rows[rows["method"].isin(INTERACTIVE) & (rows["n"] >= MIN_UNITS) & rows["CG_low"].notna()]
    if not len(rows):
        return Finding(claim, f"Whether interaction gains over Single-Agent is too few units to tell: no task has "
                              f"{MIN_UNITS} units per method.", None)
    top = rows.loc[rows["CG_low"].idxmax()]
    qs, cg = _cg(t2, top.method, top.task)
    where = f"{top.method} on {_name(top.task)}, {int(top.n)} units"
    shown = _verdict(top, +1)
    if shown is not True:
        text = (f"Interaction does not gain over Single-Agent here: the clearest interactive CG is {cg} ({where})."
                if shown is False else f"The clearest interactive gain, CG {cg} ({where}), is too few units to tell.")
        return Finding(claim, text, shown, tuple(qs))
    imp = _q(gab, "gab", top.method, top.task, "Improve", "{:.0f}")
    keep = _q(gab, "gab", top.method, top.task, "OptKeep", "{:.0f}")
    text = f"{top.method} gains most clearly over Single-Agent through interaction: CG {cg} points on " \
           f"{_name(top.task)} ({int(top.n)} units)."
    if imp and keep:
        text += (f" Its answers rise above the best initial proposal in {imp.text}% of units (GAB Improve) "
                 f"and keep an optimal one in {keep.text}% (OptKeep).")
        qs += [imp, keep]
    return Finding(claim, text, True, tuple(qs))


def loss_through_regress(t2: pd.DataFrame, gab: pd.DataFrame) -> Finding:
    """§5 Observation 2: interaction can lose a strong initial proposal (GAB Regress). Reads the cell
    with the lowest upper CG bound among cells with CG < 0 and more Regress than Improve (at least
    :data:`MIN_UNITS` units): shown when its interval lies below 0 (:func:`verdict`, paper sign -1)."""
    claim = "a method loses through regress"
    rows = _cells(t2).merge(gab, on=["method", "task", "backend"], suffixes=("", "_gab"))
    rows = rows[(rows["CG"] < 0) & (rows["Regress"] > rows["Improve"])]
    if not len(rows):
        return Finding(claim, "Interaction does not lose through regress here: no method has a negative CG with "
                              "more GAB Regress than Improve.", False)
    enough = rows[(rows["n"] >= MIN_UNITS) & rows["CG_high"].notna()]
    low = enough.loc[enough["CG_high"].idxmin()] if len(enough) else rows.loc[rows["CG"].idxmin()]
    qs, cg = _cg(t2, low.method, low.task)
    reg, imp = (_q(gab, "gab", low.method, low.task, c, "{:.0f}") for c in ("Regress", "Improve"))
    qs += [q for q in (reg, imp) if q]
    shown = _verdict(low, -1)
    labels = (f" There {reg.text}% of its answers fall below the best initial proposal (GAB Regress) and "
              f"{imp.text}% rise above it." if reg and imp else "")
    if shown is True:
        return Finding(claim, f"{low.method} loses to Single-Agent on {_name(low.task)}: CG {cg} points "
                              f"({int(low.n)} units).{labels}", True, tuple(qs))
    text = (f"Interaction does not lose through regress here: the clearest candidate is {low.method} on "
            f"{_name(low.task)}, CG {cg} ({int(low.n)} units)." if shown is False else
            f"The clearest loss through regress, {low.method} on {_name(low.task)} with CG {cg} ({int(low.n)} units), "
            "is too few units to tell.")
    return Finding(claim, text + labels, shown, tuple(qs))


def interactive_means(gab: pd.DataFrame, ar: pd.DataFrame) -> pd.DataFrame:
    """Mean label shares over the interactive methods' method-task cells (what
    :func:`improve_is_rare` and :func:`weak_lifted_strong_kept` quote): rows ``gab``, ``weak`` and
    ``strong`` with ``lift`` (weak: Surpass + Reach + Partial), ``Improve``, ``Keep`` (OptKeep +
    SubKeep), ``Regress`` and the number of cells ``n``."""
    g = gab[gab["method"].isin(INTERACTIVE)]
    a = ar[ar["method"].isin(INTERACTIVE)]
    weak, strong = a[a["group"] == "weak"], a[a["group"] == "strong"]
    nan = float("nan")
    rows = [{"group": "gab", "Improve": g["Improve"].mean(), "Keep": (g["OptKeep"] + g["SubKeep"]).mean(),
             "Regress": g["Regress"].mean(), "lift": nan, "n": len(g)},
            {"group": "weak", "Improve": nan, "Keep": weak["Keep"].mean(), "Regress": nan,
             "lift": (weak["Surpass"] + weak["Reach"] + weak["Partial"]).mean(), "n": len(weak)},
            {"group": "strong", "Improve": strong["Improve"].mean(), "Keep": (strong["OptKeep"] + strong["SubKeep"]).mean(),
             "Regress": strong["Regress"].mean(), "lift": nan, "n": len(strong)}]
    return pd.DataFrame(rows).assign(backend=gab["backend"].iloc[0] if len(gab) else "unknown")


def improve_is_rare(means: pd.DataFrame) -> Finding:
    """§5 Observation 2: for interactive methods, Improve is limited and most units are OptKeep or
    SubKeep. Shown when mean Improve is below mean OptKeep + SubKeep over the interactive methods'
    cells (:func:`interactive_means`, row ``gab``)."""
    claim = "new gains (GAB Improve) are rare; most units keep a proposal"
    imp = quote(means, "means", {"group": "gab"}, "Improve", "{:.0f}")
    keep = quote(means, "means", {"group": "gab"}, "Keep", "{:.0f}")
    if imp is None or keep is None:
        return _missing(claim, "no interactive method")
    n = int(select_rows(means, {"group": "gab"})["n"].iloc[0])
    numbers = f"{imp.text}% of units Improve on the best initial proposal, {keep.text}% keep one"
    if imp.shown_value < keep.shown_value:
        return Finding(claim, f"Gains mostly come from keeping a proposal, not from new ones: in interactive "
                              f"methods {numbers} (mean of {n} method-task cells).", True, (imp, keep))
    return Finding(claim, f"New gains are not rare: in interactive methods {numbers} (mean of {n} method-task "
                          "cells).", False, (imp, keep))


def weak_lifted_strong_kept(means: pd.DataFrame) -> Finding:
    """§5 Observation 3: weak initial proposals are often lifted (Surpass + Reach + Partial) while
    strong ones are seldom improved. Shown when the weak lift share exceeds the strong Improve
    share (:func:`interactive_means`)."""
    claim = "weak proposals are lifted, strong ones seldom improved"
    lift = quote(means, "means", {"group": "weak"}, "lift", "{:.0f}")
    imp = quote(means, "means", {"group": "strong"}, "Improve", "{:.0f}")
    reg = quote(means, "means", {"group": "strong"}, "Regress", "{:.0f}")
    if lift is None or imp is None or reg is None:
        return _missing(claim, "no weak or no strong agents in interactive methods")
    numbers = (f"{lift.text}% of weak agents move toward or past the best initial proposal, while {imp.text}% of "
               f"strong agents Improve and {reg.text}% Regress")
    if lift.shown_value > imp.shown_value:
        return Finding(claim, f"Interaction lifts weak proposals far more often than it improves strong ones: "
                              f"{numbers}.", True, (lift, imp, reg))
    return Finding(claim, f"Weak proposals are not lifted more often than strong ones improve: {numbers}.", False,
                   (lift, imp, reg))


def _point_tasks(t2: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Tasks with and without :data:`MIN_UNITS` units per method (for point comparisons)."""
    units = t2.groupby("task", sort=False)["n"].min()
    return [k for k, n in units.items() if n >= MIN_UNITS], [k for k, n in units.items() if n < MIN_UNITS]


def _few(tasks: Sequence[str]) -> str:
    return f" {', '.join(_name(k) for k in tasks)}: too few units to tell." if tasks else ""


def cce_helps(t2: pd.DataFrame) -> Finding:
    """Ablation (Table 2): CLEARS has a higher CG than CLEARS w/o CCE on all six tasks. A point
    comparison per task with at least :data:`MIN_UNITS` units: shown when CLEARS is higher on
    every such task, too few units to tell when there is none."""
    claim = "cross-agent claim evaluation (CCE) raises CG"
    both = [k for k in t2["task"].unique() if {"CLEARS", "CLEARS w/o CCE"} <= set(t2[t2["task"] == k]["method"])]
    if not both:
        return _missing(claim, "not both CLEARS variants")
    enough, few = _point_tasks(t2[t2["task"].isin(both)])
    pairs = [(k, _q(t2, "table2", "CLEARS", k, "CG", "{:+.1f}"), _q(t2, "table2", "CLEARS w/o CCE", k, "CG", "{:+.1f}"))
             for k in enough]
    pairs = [(k, a, b) for k, a, b in pairs if a and b]
    if not pairs:
        return Finding(claim, f"Whether CCE raises CG is too few units to tell.{_few(few)}", None)
    wins = sum(a.shown_value > b.shown_value for _, a, b in pairs)
    detail = "; ".join(f"{_name(k)} {a.text} vs {b.text}" for k, a, b in pairs)
    quotes = tuple(q for _, a, b in pairs for q in (a, b))
    if wins == len(pairs):
        return Finding(claim, f"CCE raises CG on every task with enough units (CLEARS vs CLEARS w/o CCE: {detail})."
                              f"{_few(few)}", True, quotes)
    return Finding(claim, f"CCE does not raise CG on every task: CLEARS beats CLEARS w/o CCE on {wins} of "
                          f"{len(pairs)} tasks ({detail}; paper: all).{_few(few)}", False, quotes)


def clears_top_cg(t2: pd.DataFrame) -> Finding:
    """Table 2: CLEARS has the highest CG on five of six tasks. A point comparison over the tasks with
    at least :data:`MIN_UNITS` units: shown when CLEARS is top on more than half of them."""
    claim = "CLEARS has the highest CG on most tasks"
    rows = _cells(t2)
    if not len(rows) or "CLEARS" not in set(rows["method"]):
        return _missing(claim, "no CG for CLEARS")
    enough, few = _point_tasks(rows)
    tops = []
    for k in enough:
        g = rows[rows["task"] == k]
        best = g.loc[g["CG"].idxmax()]
        tops.append((k, best.method, _q(t2, "table2", best.method, k, "CG", "{:+.1f}")))
    if not tops:
        return Finding(claim, f"Which method has the highest CG is too few units to tell.{_few(few)}", None)
    n = sum(m == "CLEARS" for _, m, _ in tops)
    detail = "; ".join(f"{_name(k)} {m} {q.text}" for k, m, q in tops)
    quotes = tuple(q for _, _, q in tops)
    if n * 2 > len(tops):
        return Finding(claim, f"CLEARS has the highest CG on {n} of {len(tops)} tasks ({detail}).{_few(few)}", True,
                       quotes)
    return Finding(claim, f"CLEARS is not the top method: it has the highest CG on {n} of {len(tops)} tasks "
                          f"(top: {detail}; paper: 5 of 6).{_few(few)}", False, quotes)


def token_cost_ranking(tc: pd.DataFrame) -> Finding:
    """Tables 3 and 10: MAPR costs the most tokens on every task. Shown when MAPR is the most
    expensive method on every task of the run; the sentence names the most expensive method and its
    range of multipliers."""
    claim = "MAPR is the most expensive method"
    rows = tc.dropna(subset=["TC"])
    if not len(rows):
        return _missing(claim, "no token cost")
    tops = [(k, g.loc[g["TC"].idxmax()].method) for k, g in rows.groupby("task", sort=False)]
    counts = pd.Series([m for _, m in tops]).value_counts()
    top = str(counts.index[0])
    mine = rows[rows["method"] == top]
    lo_k, hi_k = mine.loc[mine["TC"].idxmin()].task, mine.loc[mine["TC"].idxmax()].task
    lo, hi = _q(tc, "tc", top, lo_k, "TC", "{:.1f}"), _q(tc, "tc", top, hi_k, "TC", "{:.1f}")
    spread = f"{lo.text}×" if lo.text == hi.text else f"{lo.text}× to {hi.text}×"
    where = f"{top} costs the most tokens on {int(counts.iloc[0])} of {len(tops)} tasks, {spread} Single-Agent's"
    if all(m == "MAPR" for _, m in tops):
        return Finding(claim, f"{where}, as in the paper.", True, (lo, hi))
    return Finding(claim, f"MAPR is not the most expensive method: {where} (paper: MAPR).", False, (lo, hi))


def al_fpa_correlation(al: pd.DataFrame, ov_fpa: pd.DataFrame) -> pd.DataFrame:
    """Across method-task cells with a defined FPA, Spearman's rho between FPA and AL (§5 Observation 4,
    Fig. 6, Table 9): one row with ``rho``, ``p`` and the number of cells ``n``."""
    from .metrics import correlation

    cells = al.merge(ov_fpa, on=["method", "task", "backend"]).dropna(subset=["AL", "FPA"])
    backend = al["backend"].iloc[0] if len(al) else "unknown"
    if len(cells) < 3 or cells["AL"].nunique() < 2 or cells["FPA"].nunique() < 2:
        return pd.DataFrame([{"rho": float("nan"), "p": float("nan"), "n": len(cells), "backend": backend}])
    c = correlation(cells["FPA"].tolist(), cells["AL"].tolist())
    return pd.DataFrame([{"rho": c.spearman, "p": c.spearman_p, "n": c.n, "backend": backend}])


def al_follows_agreement(t: pd.DataFrame) -> Finding:
    """§5 Observation 4: aggregation loss depends on proposal convergence: cells whose final proposals
    agree more often (FPA) lose less at aggregation (AL). Over the method-task cells of
    :func:`al_fpa_correlation`: shown when Spearman's rho is negative with p < 0.05, not shown when
    it is positive with p < 0.05, too few units to tell otherwise."""
    claim = "aggregation loss falls as final proposals agree"
    rho = quote(t, "al_fpa", {}, "rho")
    p = quote(t, "al_fpa", {}, "p", "{:.3f}")
    n = int(t["n"].iloc[0]) if len(t) else 0
    if rho is None or p is None:
        return Finding(claim, f"Whether aggregation loss follows agreement is too few units to tell ({n} cells with "
                              "an FPA).", None)
    ptext = "p < .001" if p.value < 0.001 else f"p = {p.text}"
    stats = f"Spearman ρ {rho.text} between FPA and AL over {n} method-task cells, {ptext}"
    quotes = (rho,) if p.value < 0.001 else (rho, p)
    if p.value < 0.05 and rho.value < 0:
        return Finding(claim, f"Methods whose final proposals agree more lose less at aggregation ({stats}).", True,
                       quotes)
    if p.value < 0.05:
        return Finding(claim, f"Aggregation loss does not fall as final proposals agree ({stats}).", False, quotes)
    return Finding(claim, f"Aggregation loss and agreement are not clearly related ({stats}): too few units to tell.",
                   None, quotes)


def proposal_score_tracks_ts(t7: pd.DataFrame) -> Finding:
    """Table 7: across methods, the mean score of the moves played correlates positively with TS on
    the games.
    Shown when Spearman's rho is positive on every dynamic task of the run."""
    claim = "proposal scores track task scores"
    rows = t7.dropna(subset=["rho"])
    if not len(rows):
        return _missing(claim, "no game with enough methods")
    qs = [(k, quote(t7, "table7", {"task": k}, "rho")) for k in rows["task"]]
    detail = "; ".join(f"{_name(k)} {rho.text}" for k, rho in qs)
    n = int(rows["n"].iloc[0])
    if all(rho.shown_value > 0 for _, rho in qs):
        return Finding(claim, f"Methods whose moves score higher also score higher in the games (Spearman ρ: "
                              f"{detail}; {n} methods).", True, tuple(q for _, q in qs))
    return Finding(claim, f"Proposal scores do not track task scores on every game (Spearman ρ: "
                          f"{detail}; {n} methods).", False, tuple(q for _, q in qs))


def regress_across_settings(t4: pd.DataFrame, methods: Sequence[str] = ("Int. Debate", "MAPR")) -> Finding:
    """Table 4: across proposer counts, rounds and team mixes, GAB Improve stays below GAB Regress.
    Shown when GI < GR in every setting x method cell of the run; the sentence counts the cells and
    names at most three exceptions."""
    claim = "Improve stays below Regress in every setting"
    rows = t4[t4["method"].isin(methods)].dropna(subset=["GI", "GR"])
    if not len(rows):
        return _missing(claim, "no Table 4 setting")
    quotes, exceptions = [], []
    for r in rows.itertuples():
        gi = quote(t4, "table4", {"setting": r.setting, "method": r.method}, "GI", "{:.1f}")
        gr = quote(t4, "table4", {"setting": r.setting, "method": r.method}, "GR", "{:.1f}")
        if not gi.value < gr.value:
            exceptions.append(f"{r.method} {r.setting} {gi.text}% vs {gr.text}%")
            quotes += [gi, gr]
    held = len(rows) - len(exceptions)
    if not exceptions:
        return Finding(claim, f"GAB Improve stays below Regress in all {len(rows)} setting-method cells of Table 4.",
                       True)
    more = f" and {len(exceptions) - 3} more" if len(exceptions) > 3 else ""
    return Finding(claim, f"GAB Improve is not below Regress in every setting: it is in {held} of "
                          f"{len(rows)} cells of Table 4 (not in {'; '.join(exceptions[:3])}{more}).", False,
                   tuple(quotes[:6]))
