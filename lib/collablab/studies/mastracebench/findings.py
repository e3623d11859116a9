"""Sentences about a MASTraceBench run, written from its result tables (mastracebench.txt §4-5).

Each function takes long result tables (one row per method x task, with a ``backend`` column;
built by :mod:`.report`) and returns a :class:`~collablab.analysis.findings.Finding` whose
wording follows the numbers it quotes, names the backend, and says "does not show" where the
run does not show the paper's observation. Every docstring states the paper's claim it checks
and when each wording is chosen. Numbers are compared as printed (two decimals).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...analysis.findings import Finding, Quote, backend_of, lead, quote, select_rows
from .metrics import SINGLE_AGENT

__all__ = ["INTERACTIVE", "cce_helps", "clears_top_cg", "gain_through_interaction", "improve_is_rare", "interactive_means",
           "loss_through_regress", "proposal_score_tracks_ts", "regress_across_settings", "token_cost_ranking",
           "weak_lifted_strong_kept"]

#: Methods whose proposers see each other's proposals or feedback before the answer (§4's
#: "interactive protocols"); their gains can come from interaction, not only from selection.
INTERACTIVE = ("Int. Debate", "Agg. Debate", "Adv. Debate", "Reflection", "MAPR", "AgentVerse")


def _missing(t: pd.DataFrame, claim: str, what: str) -> Finding:
    return Finding(claim, lead(backend_of(t), f"Not checked ({claim}): this run has {what}."), None)


def _q(t: pd.DataFrame, table: str, method: str, task: str, column: str, fmt: str = "{:.2f}") -> Quote | None:
    return quote(t, table, {"method": method, "task": task}, column, fmt)


def gain_through_interaction(t2: pd.DataFrame, gab: pd.DataFrame) -> Finding:
    """§5 (Observation 1-2): interactive methods can gain over Single-Agent. Shown when an
    interactive method has CG > 0 on some task; the sentence names the largest such cell and
    its GAB Improve and keep shares (whether the gain came from new proposals or from keeping a
    strong one)."""
    claim = "an interactive method gains over Single-Agent"
    rows = t2[t2["method"].isin(INTERACTIVE)].dropna(subset=["CG"])
    if not len(rows):
        return _missing(t2, claim, "no interactive method with a CG")
    top = rows.loc[rows["CG"].idxmax()]
    cg = _q(t2, "table2", top.method, top.task, "CG", "{:+.2f}")
    if cg is None or cg.shown_value <= 0:
        return Finding(claim, lead(backend_of(t2), f"In this run the {backend_of(t2)} backend does not show a gain through "
                                    f"interaction: no interactive method has a positive CG (the largest is "
                                    f"{cg.text if cg else 'missing'}, {top.method} on {top.task})."), False,
                       tuple(q for q in (cg,) if q))
    imp = _q(gab, "gab", top.method, top.task, "Improve", "{:.1f}")
    keep = _q(gab, "gab", top.method, top.task, "OptKeep", "{:.1f}")
    quotes = tuple(q for q in (cg, imp, keep) if q)
    where = (f"; its GAB labels: Improve {imp.text}% and OptKeep {keep.text}% of units" if imp and keep else "")
    n = int(select_rows(t2, {"method": top.method, "task": top.task})["n"].iloc[0])
    return Finding(claim, lead(backend_of(t2), f"{top.method} gains most over Single-Agent through interaction: "
                                f"CG {cg.text} on {top.task} ({n} units){where}."), True, quotes)


def loss_through_regress(t2: pd.DataFrame, gab: pd.DataFrame) -> Finding:
    """§5 (Observation 2): interaction can lose a strong initial proposal (GAB Regress). Shown when
    some method has CG < 0 on a task where its Regress share exceeds its Improve share."""
    claim = "a method loses through regress"
    rows = t2[t2["method"] != SINGLE_AGENT].dropna(subset=["CG"]).merge(gab, on=["method", "task", "backend"])
    rows = rows[(rows["CG"] < 0) & (rows["Regress"] > rows["Improve"])]
    if not len(rows):
        return Finding(claim, lead(backend_of(t2), f"In this run the {backend_of(t2)} backend does not show a loss through regress: "
                                    "no method has a negative CG with more Regress than Improve."), False)
    low = rows.loc[rows["CG"].idxmin()]
    cg = _q(t2, "table2", low.method, low.task, "CG", "{:+.2f}")
    reg, imp = (_q(gab, "gab", low.method, low.task, c, "{:.1f}") for c in ("Regress", "Improve"))
    quotes = tuple(q for q in (cg, reg, imp) if q)
    n = int(select_rows(t2, {"method": low.method, "task": low.task})["n"].iloc[0])
    return Finding(claim, lead(backend_of(t2), f"{low.method} loses to Single-Agent on {low.task} (CG {cg.text}, {n} units) "
                                f"where {reg.text}% of its answers fall below the best initial proposal (GAB "
                                f"Regress) and {imp.text}% rise above it (Improve)."), True, quotes)


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
    return pd.DataFrame(rows).assign(backend=backend_of(gab))


def improve_is_rare(means: pd.DataFrame) -> Finding:
    """§5 Observation 2: for interactive methods, Improve is limited and most units are OptKeep or
    SubKeep. Shown when mean Improve is below mean OptKeep + SubKeep over the interactive methods'
    cells (:func:`interactive_means`, row ``gab``)."""
    claim = "new gains (GAB Improve) are rare; most units keep a proposal"
    imp = quote(means, "means", {"group": "gab"}, "Improve", "{:.1f}")
    keep = quote(means, "means", {"group": "gab"}, "Keep", "{:.1f}")
    if imp is None or keep is None:
        return _missing(means, claim, "no interactive method")
    n = int(select_rows(means, {"group": "gab"})["n"].iloc[0])
    if imp.shown_value < keep.shown_value:
        return Finding(claim, lead(backend_of(means), f"Interactive methods keep an existing proposal far more often "
                                    f"than they improve on it: mean GAB Improve {imp.text}% against OptKeep + SubKeep "
                                    f"{keep.text}% over {n} method-task cells."), True, (imp, keep))
    return Finding(claim, lead(backend_of(means), f"In this run the {backend_of(means)} backend does not show new gains as rare: mean "
                                f"GAB Improve {imp.text}% against OptKeep + SubKeep {keep.text}% over {n} method-task "
                                "cells."), False, (imp, keep))


def weak_lifted_strong_kept(means: pd.DataFrame) -> Finding:
    """§5 Observation 3: weak initial proposals are often lifted (Surpass + Reach + Partial) while
    strong ones are seldom improved. Shown when the weak lift share exceeds the strong Improve
    share (:func:`interactive_means`)."""
    claim = "weak proposals are lifted, strong ones seldom improved"
    lift = quote(means, "means", {"group": "weak"}, "lift", "{:.1f}")
    imp = quote(means, "means", {"group": "strong"}, "Improve", "{:.1f}")
    reg = quote(means, "means", {"group": "strong"}, "Regress", "{:.1f}")
    if lift is None or imp is None or reg is None:
        return _missing(means, claim, "no weak or no strong agents in interactive methods")
    numbers = (f"{lift.text}% of weak agents Surpass, Reach or move Partially toward the best initial proposal, "
               f"{imp.text}% of strong agents Improve and {reg.text}% Regress")
    if lift.shown_value > imp.shown_value:
        return Finding(claim, lead(backend_of(means), "Interaction lifts weak proposals more often than it improves "
                                    f"strong ones: {numbers}."), True, (lift, imp, reg))
    return Finding(claim, lead(backend_of(means), f"In this run the {backend_of(means)} backend does not show weak proposals lifted "
                                f"more often than strong ones improve: {numbers}."), False, (lift, imp, reg))


def cce_helps(t2: pd.DataFrame) -> Finding:
    """Ablation (Table 2): CLEARS has a higher CG than CLEARS w/o CCE on all six tasks. Shown when
    CLEARS is higher on every task of the run; the sentence counts the tasks either way."""
    claim = "cross-agent claim evaluation (CCE) raises CG"
    tasks = [k for k in t2["task"].unique() if {"CLEARS", "CLEARS w/o CCE"} <= set(t2[t2["task"] == k]["method"])]
    if not tasks:
        return _missing(t2, claim, "not both CLEARS variants")
    pairs = [(_q(t2, "table2", "CLEARS", k, "CG", "{:+.2f}"), _q(t2, "table2", "CLEARS w/o CCE", k, "CG", "{:+.2f}"))
             for k in tasks]
    pairs = [(k, a, b) for k, (a, b) in zip(tasks, pairs) if a and b]
    wins = [k for k, a, b in pairs if a.shown_value > b.shown_value]
    detail = "; ".join(f"{k} {a.text} vs {b.text}" for k, a, b in pairs)
    shown = len(wins) == len(pairs)
    head = ("CCE raises CG on every task" if shown else
            f"In this run the {backend_of(t2)} backend does not show that CCE raises CG: CLEARS beats CLEARS w/o CCE on "
            f"{len(wins)} of {len(pairs)} tasks")
    return Finding(claim, lead(backend_of(t2), f"{head} (CLEARS vs CLEARS w/o CCE: {detail})."),
                   shown, tuple(q for _, a, b in pairs for q in (a, b)))


def clears_top_cg(t2: pd.DataFrame) -> Finding:
    """Table 2: CLEARS has the highest CG on five of six tasks. Shown when CLEARS has the highest
    CG on more than half of the run's tasks; the sentence names each task's top method."""
    claim = "CLEARS has the highest CG on most tasks"
    rows = t2.dropna(subset=["CG"])
    if not len(rows) or "CLEARS" not in set(rows["method"]):
        return _missing(t2, claim, "no CG for CLEARS")
    tops, quotes = [], []
    for k, g in rows.groupby("task", sort=False):
        best = g.loc[g["CG"].idxmax()]
        q = _q(t2, "table2", best.method, k, "CG", "{:+.2f}")
        quotes.append(q)
        tops.append((k, best.method, q))
    n = sum(m == "CLEARS" for _, m, _ in tops)
    shown = n * 2 > len(tops)
    detail = "; ".join(f"{k}: {m} {q.text}" for k, m, q in tops)
    head = (f"CLEARS has the highest CG on {n} of {len(tops)} tasks" if shown else
            f"In this run the {backend_of(t2)} backend does not show CLEARS with the highest CG on most tasks: it has it on {n} of "
            f"{len(tops)} (the paper: 5 of 6)")
    return Finding(claim, lead(backend_of(t2), f"{head} ({detail})."), shown, tuple(quotes))


def token_cost_ranking(tc: pd.DataFrame) -> Finding:
    """Tables 3 and 10: MAPR costs the most tokens on every task, and removing CCE roughly halves
    CLEARS's cost. Shown when MAPR is the most expensive method on every task of the run."""
    claim = "MAPR is the most expensive method"
    rows = tc.dropna(subset=["TC"])
    if not len(rows):
        return _missing(tc, claim, "no token cost")
    tops = [(k, g.loc[g["TC"].idxmax()].method) for k, g in rows.groupby("task", sort=False)]
    quotes = [_q(tc, "tc", m, k, "TC", "{:.2f}") for k, m in tops]
    shown = all(m == "MAPR" for _, m in tops)
    detail = "; ".join(f"{k}: {m} {q.text}x" for (k, m), q in zip(tops, quotes))
    ratio = ""
    for k, _ in tops[:1]:
        a, b = _q(tc, "tc", "CLEARS", k, "TC"), _q(tc, "tc", "CLEARS w/o CCE", k, "TC")
        if a and b:
            quotes += [a, b]
            ratio = f"; on {k} CLEARS costs {a.text}x and CLEARS w/o CCE {b.text}x"
    head = ("MAPR is the most expensive method on every task" if shown else
            f"In this run the {backend_of(tc)} backend does not show MAPR as the most expensive method on every task")
    offline = (" Offline token counts are word counts of prompts and replies, not tokenizer counts."
               if backend_of(tc) == "heuristic" else "")
    return Finding(claim, lead(backend_of(tc), f"{head} (the most expensive per task: {detail}){ratio}.{offline}"), shown,
                   tuple(quotes))


def proposal_score_tracks_ts(t7: pd.DataFrame) -> Finding:
    """Table 7: across methods, the mean proposal score correlates positively with TS on the games.
    Shown when Spearman's rho is positive on every dynamic task of the run."""
    claim = "proposal scores track task scores"
    rows = t7.dropna(subset=["rho"])
    if not len(rows):
        return _missing(t7, claim, "no game with enough methods")
    qs = [(k, quote(t7, "table7", {"task": k}, "rho"), quote(t7, "table7", {"task": k}, "r")) for k in rows["task"]]
    shown = all(rho.shown_value > 0 for _, rho, _ in qs)
    detail = "; ".join(f"{k}: ρ {rho.text}, r {r.text}" for k, rho, r in qs)
    head = "Methods whose proposals score higher also score higher in the games" if shown else \
        f"In this run the {backend_of(t7)} backend does not show proposal scores tracking task scores on every game"
    return Finding(claim, lead(backend_of(t7), f"{head} ({detail}; {int(rows['n'].iloc[0])} methods each)."), shown,
                   tuple(q for _, a, b in qs for q in (a, b)))


def regress_across_settings(t4: pd.DataFrame, methods: Sequence[str] = ("Int. Debate", "MAPR")) -> Finding:
    """Table 4: across proposer counts, rounds and team mixes, GAB Improve stays below GAB Regress.
    Shown when GI < GR in every setting x method cell of the run."""
    claim = "Improve stays below Regress in every setting"
    rows = t4[t4["method"].isin(methods)].dropna(subset=["GI", "GR"])
    if not len(rows):
        return _missing(t4, claim, "no Table 4 setting")
    quotes, held, cells = [], 0, []
    for r in rows.itertuples():
        gi = quote(t4, "table4", {"setting": r.setting, "method": r.method}, "GI", "{:.1f}")
        gr = quote(t4, "table4", {"setting": r.setting, "method": r.method}, "GR", "{:.1f}")
        quotes += [gi, gr]
        held += gi.shown_value < gr.shown_value
        cells.append(f"{r.setting} {r.method} {gi.text} vs {gr.text}")
    shown = held == len(rows)
    head = (f"GAB Improve is below Regress in all {len(rows)} setting-method cells" if shown else
            f"In this run the {backend_of(t4)} backend does not show Improve below Regress in every setting: it is in {held} of "
            f"{len(rows)} setting-method cells (the paper: all)")
    return Finding(claim, lead(backend_of(t4), f"{head} of Table 4 (GI vs GR, %: {'; '.join(cells)})."), shown,
                   tuple(quotes))
