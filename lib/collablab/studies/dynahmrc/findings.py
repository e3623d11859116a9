"""Notebook 06's sentences, written from its tables (:mod:`.report`; dynahmrc.tex §4.4-4.6 and the
appendix's leader election and paired comparison).

One finding per sentence, plain metric names (:data:`NAMES`), no backend label (the notebook's
headline names the backend once). Every number a sentence prints is a :class:`Quote` of its cell.

The rule for ``shown`` (:data:`MIN_N`, documented once, applied everywhere):

- a finding on a paired interval (DynaHMRC minus CoELA) uses
  :func:`~collablab.analysis.findings.verdict` with at least :data:`MIN_N` paired tasks;
- a finding comparing one condition's mean with another condition's 95% interval
  (:func:`beyond`) is shown when the mean lies beyond that interval on the paper's side, not shown
  when it lies at or on the other side of that condition's mean, and too close to tell in between;
- a finding on a trend of means (difficulty, team size) compares the means as printed;
- any finding whose cells hold fewer than :data:`MIN_N` episodes is "too few units to tell".

A "not shown" sentence says plainly that the run's backend does not show the paper's effect.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...analysis.findings import Finding, Quote, quote, verdict
from .difficulty import LEVELS

__all__ = ["MIN_N", "NAMES", "PAPER_SIGN", "PCT", "ablation_drops", "beyond", "centralized_gap", "difficulty_fall",
           "dynamic_gap", "election_first_round", "leader_saves_steps", "limits", "paired_effect",
           "search_team_size", "search_under_variation", "sensitivity_best", "timing_disrupts",
           "zones_do_not_strictly_degrade"]

#: Below this many episodes (or paired tasks) in a cell, a finding is "too few units to tell".
MIN_N = 10
#: Plain names of the five metrics of §4.4.
NAMES = {"success": "success rate", "ps": "partial success", "ts": "temporal steps",
         "as_per_robot": "action steps per robot", "cc": "communications per robot"}
#: The paper's direction of DynaHMRC's advantage on each metric (appendix, paired comparison).
PAPER_SIGN = {"success": 1, "ps": 1, "ts": -1, "as_per_robot": -1, "cc": -1}
PCT = "{:.1%}"
_FMT = {"success": PCT, "ps": PCT, "ts": "{:.1f}", "as_per_robot": "{:.1f}", "cc": "{:.2f}"}
_DIFF = {"success": "{:+.1%}", "ps": "{:+.1%}", "ts": "{:+.2f}", "as_per_robot": "{:+.2f}", "cc": "{:+.2f}"}


def _finding(claim: str, parts: list[Any], shown: bool | None) -> Finding:
    """A finding from text pieces and quotes (a quote prints its own text)."""
    quotes = tuple(p for p in parts if isinstance(p, Quote))
    return Finding(claim, "".join(p.text if isinstance(p, Quote) else str(p) for p in parts), shown, quotes)


def _mean_ci(t: pd.DataFrame, name: str, where: dict[str, Any], metric: str) -> list[Any] | None:
    """``mean [low, high]`` of ``metric`` at ``where`` as sentence parts, or None without the row."""
    fmt = _FMT[metric]
    qs = [quote(t, name, where, f"{metric}_{s}", fmt) for s in ("mean", "low", "high")]
    return None if any(q is None for q in qs) else [qs[0], " [", qs[1], ", ", qs[2], "]"]


def _n(t: pd.DataFrame, where: dict[str, Any]) -> int:
    rows = t
    for k, v in where.items():
        rows = rows[rows[k] == v]
    return int(rows["n"].min()) if len(rows) else 0


def _episodes(n: int) -> str:
    return f"{n} episode" + ("" if n == 1 else "s")


def _not(backend: str, what: str) -> str:
    return f"; the {backend} backend does not show {what}."


def beyond(mean: float, other_mean: float, other_low: float, other_high: float, sign: int) -> bool | None:
    """The comparison rule of this module: True when ``mean`` lies beyond the other condition's
    95% interval on the paper's side (``sign`` +1: above, -1: below), False when it is at or on
    the wrong side of the other condition's mean, None (too close to tell) in between."""
    if sign * (mean - other_mean) <= 0:
        return False
    return True if (mean > other_high if sign > 0 else mean < other_low) else None


def _beyond(a: Quote, b: list[Any], sign: int) -> bool | None:
    """:func:`beyond` on printed values: ``a`` against ``b`` = ``[mean, " [", low, ", ", high, "]"]``."""
    return beyond(a.shown_value, b[0].shown_value, b[2].shown_value, b[4].shown_value, sign)


def difficulty_fall(t: pd.DataFrame, method: str, backend: str) -> Finding | None:
    """Success falls as difficulty grows (§4.4, paper Fig. 5). Shown when the printed success
    rates fall strictly from easy to medium to hard; None below :data:`MIN_N` episodes a level."""
    where = {lv: {"method_label": method, "level": lv} for lv in LEVELS}
    parts = {lv: _mean_ci(t, "by_difficulty", w, "success") for lv, w in where.items()}
    if any(p is None for p in parts.values()):
        return None
    e, m, h = (parts[lv][0] for lv in LEVELS)
    claim = "success falls as difficulty grows (paper Fig. 5)"
    if min(_n(t, w) for w in where.values()) < MIN_N:
        return _finding(claim, [f"{method}'s success rate is ", e, " on easy, ", m, " on medium and ", h,
                                " on hard tasks, from too few episodes per level to tell."], None)
    if e.shown_value > m.shown_value > h.shown_value:
        return _finding(claim, [f"{method}'s success rate falls from ", e, " on easy tasks to ", m, " on medium and ",
                                *parts["hard"], " on hard ones."], True)
    return _finding(claim, [f"{method}'s success rate does not fall steadily with difficulty (easy ", e, ", medium ",
                            m, ", hard ", h, ")", _not(backend, "the paper's steady fall")], False)


def search_team_size(t: pd.DataFrame, method: str, backend: str) -> Finding | None:
    """Search success falls as the team grows (§4.4, paper Fig. 6: MCTS's bars fall with more robot
    types). Shown when the printed success rate of the largest team is below the smallest team's;
    None below :data:`MIN_N` episodes at a team size."""
    part = t[t["method_label"] == method].sort_values("n_types")
    if len(part) < 2:
        return None
    sizes = [int(n) for n in part["n_types"]]
    qs = [quote(t, "search_by_types", {"method_label": method, "n_types": n}, "success_mean", PCT) for n in sizes]
    listing: list[Any] = []
    for k, (n, q) in enumerate(zip(sizes, qs)):
        listing += ["" if k == 0 else " and " if k == len(qs) - 1 else ", ", q,
                    f" with {n} robot types" if k == 0 else f" with {n}"]
    claim = "search success falls as the team grows (paper Fig. 6)"
    if int(part["n"].min()) < MIN_N:
        return _finding(claim, [f"{method}'s success rate is ", *listing,
                                f"; one team size has only {_episodes(int(part['n'].min()))}, too few to tell."], None)
    if qs[-1].shown_value < qs[0].shown_value:
        return _finding(claim, [f"{method}'s success rate falls as the team grows: ", *listing, "."], True)
    return _finding(claim, [f"{method}'s success rate does not fall as the team grows (", *listing, ")",
                            _not(backend, "the paper's fall")], False)


#: §4.5's MCTS success under each variation against static medium (26.5%), in words: (paper, sign).
PAPER_SEARCH_DYNAMIC = {"CTO": ("rises slightly", 1), "IRZ": ("drops sharply", -1), "ANC": ("stays low, below it", -1),
                        "REC": ("rises, the team being smaller", 1)}


def search_under_variation(t: pd.DataFrame, method: str, setting: str, backend: str) -> Finding | None:
    """MCTS under a variation against the same search on static medium tasks (§4.5: "the success
    rate of MCTS increases slightly from 26.5% to 30.4%" under CTO, "drops sharply to 12.4%" under
    IRZ, "only 23.2%" under ANC, "rises to 43.5%" under REC); shown when the variation's mean lies
    beyond the static interval on the paper's side (:func:`beyond`)."""
    qv = quote(t, "search_dynamic", {"method_label": method, "setting": setting}, "success_mean", PCT)
    static = _mean_ci(t, "search_dynamic", {"method_label": method, "setting": "Static"}, "success")
    if qv is None or static is None or setting not in PAPER_SEARCH_DYNAMIC:
        return None
    paper, sign = PAPER_SEARCH_DYNAMIC[setting]
    word = "rises" if sign > 0 else "falls"
    n = min(_n(t, {"method_label": method, "setting": s}) for s in ("Static", setting))
    shown = None if n < MIN_N else _beyond(qv, static, sign)
    tail = (", from too few episodes to tell." if n < MIN_N else
            {True: ".", None: ", within the static interval: too close to tell.",
             False: _not(backend, f"the paper's {'rise' if sign > 0 else 'fall'}")}[shown])
    return _finding(f"{method}'s success {word} under {setting} against static medium tasks (§4.5)",
                    [f"Under {setting} {method} succeeds in ", qv, " of medium episodes, against ", *static,
                     f" on static medium tasks (paper: it {paper})", tail], shown)


def timing_disrupts(t: pd.DataFrame, method: str, backend: str, name: str = "sensitivity_CTO") -> Finding | None:
    """``lab:sensitivity_dyna``, CTO: "earlier target changes are more disruptive to the baseline methods"
    (paper Table dT_CTO: at T = 3 COHERENT and CoELA reach 14.8% and 22.2% success against 40.7% and 48.1%
    at T = 5); :func:`beyond` of the earliest T's success against the default T = 5's interval, below."""
    ts = sorted(int(v) for v in set(t.loc[t["method_label"] == method, "T"]))
    if 5 not in ts or not ts or ts[0] >= 5:
        return None
    early = quote(t, name, {"T": ts[0], "method_label": method}, "success_mean", PCT)
    default = _mean_ci(t, name, {"T": 5, "method_label": method}, "success")
    if early is None or default is None:
        return None
    n = min(_n(t, {"T": v, "method_label": method}) for v in (ts[0], 5))
    shown = None if n < MIN_N else _beyond(early, default, -1)
    tail = (", from too few episodes to tell." if n < MIN_N else
            {True: ".", None: ", within that interval: too close to tell.",
             False: _not(backend, "the paper's larger disruption from an early change")}[shown])
    return _finding(f"an earlier CTO disrupts {method} more (paper Table dT_CTO)",
                    [f"When the targets change at T = {ts[0]} {method} succeeds in ", early,
                     " of Pack Objects episodes, against ", *default, " at T = 5", tail], shown)


def zones_do_not_strictly_degrade(t: pd.DataFrame, method: str, backend: str,
                                  name: str = "sensitivity_IRZ") -> Finding | None:
    """``lab:sensitivity_dyna``, IRZ: "performance does not strictly degrade as the number of restricted
    zones increases" (paper Table dN_IRZ); a trend of means as printed: shown when the success rate does
    not fall at every added zone, not shown when it does."""
    part = t[t["method_label"] == method].sort_values("zones")
    if len(part) < 2:
        return None
    zs = [int(z) for z in part["zones"]]
    qs = [quote(t, name, {"zones": z, "method_label": method}, "success_mean", PCT) for z in zs]
    listing: list[Any] = []
    for k, (z, q) in enumerate(zip(zs, qs)):
        listing += ["" if k == 0 else " and " if k == len(qs) - 1 else ", ", q,
                    f" with {z} restricted zone" + ("" if z == 1 else "s") if k == 0 else f" with {z}"]
    claim = f"{method}'s results do not strictly degrade as zones are added (paper Table dN_IRZ)"
    if int(part["n"].min()) < MIN_N:
        return _finding(claim, [f"Under IRZ {method}'s success rate is ", *listing,
                                f"; one cell has only {_episodes(int(part['n'].min()))}, too few to tell."], None)
    falls = all(b.shown_value < a.shown_value for a, b in zip(qs, qs[1:]))
    if not falls:
        return _finding(claim, [f"Under IRZ {method}'s success rate does not strictly degrade as zones are added: ",
                                *listing, "."], True)
    return _finding(claim, [f"Under IRZ {method}'s success rate falls with every added zone (", *listing, ")",
                            _not(backend, "the paper's uneven results")], False)


def sensitivity_best(t: pd.DataFrame, name: str, setting: str | None, backend: str) -> Finding | None:
    """``lab:sensitivity_dyna``: DynaHMRC "consistently achieves the best or near-best SUCC" at every
    trigger step (ANC and REC, paper Table dT_ANC_REC; CTO: it "consistently maintains strong
    performance"). Near-best, by :func:`beyond` read from the other side: at every T no other method's
    success lies beyond DynaHMRC's interval above it (shown); some does (not shown)."""
    rows = t if setting is None else t[t["setting"] == setting]
    base = {} if setting is None else {"setting": setting}
    ts = sorted(int(v) for v in set(rows["T"]))
    if len(ts) < 2 or "DynaHMRC" not in set(rows["method_label"]):
        return None
    parts: list[Any] = []
    verdicts: list[bool] = []
    for T in ts:
        own = _mean_ci(t, name, {**base, "T": T, "method_label": "DynaHMRC"}, "success")
        others = rows[(rows["T"] == T) & (rows["method_label"] != "DynaHMRC")]
        if own is None or not len(others):
            return None
        best = str(others.loc[others["success_mean"].idxmax(), "method_label"])
        qb = quote(t, name, {**base, "T": T, "method_label": best}, "success_mean", PCT)
        verdicts.append(qb.shown_value <= own[4].shown_value)
        parts += ["; " if parts else "", f"T = {T}: ", own[0], f" against {best}'s ", qb]
    where = setting or "CTO"
    table = "dT_CTO" if setting is None else "dT_ANC_REC"
    claim = f"DynaHMRC is best or near-best at every trigger step under {where} (paper Table {table})"
    n = int(rows["n"].min())
    if n < MIN_N:
        return _finding(claim, [f"Under {where} DynaHMRC's success rate is ", *parts,
                                f", one cell has only {_episodes(n)}, too few to tell."], None)
    if all(verdicts):
        return _finding(claim, [f"Under {where} DynaHMRC's success rate is the best or near-best at every trigger step (",
                                *parts, ")."], True)
    return _finding(claim, [f"Under {where} another method lies above DynaHMRC's interval at some trigger step (",
                            *parts, ")", _not(backend, "the paper's best or near-best at every step")], False)


def ablation_drops(t: pd.DataFrame, backend: str) -> list[Finding]:
    """Ablations (paper Table XI): removing feedback lowers success the most, and removing history,
    the leader or reflection lowers it. The first is shown when feedback's is the lowest printed
    success rate; each drop follows :func:`beyond` against the full framework's interval."""
    full = _mean_ci(t, "ablation_overall", {"ablation_label": "full"}, "success")
    rest = t[~t["ablation_label"].isin(["full"])]
    if full is None or not len(rest):
        return []
    out = []
    worst = str(rest.loc[rest["success_mean"].idxmin(), "ablation_label"])
    qw = _mean_ci(t, "ablation_overall", {"ablation_label": worst}, "success")
    claim = "removing feedback lowers success the most (paper Table XI)"
    if int(t["n"].min()) < MIN_N:
        out.append(_finding(claim, [f"The lowest success rate is {worst}'s, ", qw[0], " against ", full[0],
                                    " for the full framework, from too few episodes to tell."], None))
    elif worst == "w/o feedback":
        out.append(_finding(claim, ["Removing feedback lowers the success rate the most, to ", *qw, " from ", *full,
                                    " for the full framework."], True))
    else:
        out.append(_finding(claim, [f"The lowest success rate is {worst}'s (", qw[0], ", full framework ", full[0], ")",
                                    _not(backend, "feedback as the most needed part")], False))
    for label in ("w/o history", "w/o leader", "w/o reflection"):
        q = quote(t, "ablation_overall", {"ablation_label": label}, "success_mean", PCT)
        if q is None:
            continue
        what = label.replace("w/o leader", "without the leader").replace("w/o ", "without ")
        claim = f"{what} lowers success (paper Table XI)"
        n = _n(t, {"ablation_label": label})
        shown = None if n < MIN_N else _beyond(q, full, -1)
        tail = {True: ".", None: ", too close to the full framework's interval to tell.",
                False: _not(backend, "the paper's drop")}[shown] if n >= MIN_N else ", from too few episodes to tell."
        out.append(_finding(claim, [f"The success rate {what} is ", q, " against ", full[0], " with it", tail], shown))
    return out


def leader_saves_steps(t: pd.DataFrame, backend: str) -> Finding | None:
    """The leader reduces redundant work (paper Table XI): action steps per robot are lower with the
    leader; :func:`beyond` of the full framework's mean against the interval without a leader."""
    qa = quote(t, "ablation_overall", {"ablation_label": "full"}, "as_per_robot_mean", _FMT["as_per_robot"])
    other = _mean_ci(t, "ablation_overall", {"ablation_label": "w/o leader"}, "as_per_robot")
    if qa is None or other is None:
        return None
    n = min(_n(t, {"ablation_label": "full"}), _n(t, {"ablation_label": "w/o leader"}))
    shown = None if n < MIN_N else _beyond(qa, other, -1)
    tail = (", from too few episodes to tell." if n < MIN_N else
            {True: ".", None: ", too close to tell.", False: _not(backend, "the paper's saving")}[shown])
    return _finding("the leader reduces action steps (paper Table XI)",
                    ["With a leader each robot takes ", qa, " action steps against ", *other, " without one", tail],
                    shown)


def dynamic_gap(t: pd.DataFrame, setting: str, backend: str) -> Finding | None:
    """Under each dynamic variation DynaHMRC succeeds more often than CoELA (§4.5, paper Fig. 7 and
    Tables V-VIII); :func:`beyond` of DynaHMRC's mean against CoELA's interval."""
    qd = quote(t, "dynamic", {"method_label": "DynaHMRC", "setting": setting}, "success_mean", PCT)
    other = _mean_ci(t, "dynamic", {"method_label": "CoELA", "setting": setting}, "success")
    if qd is None or other is None:
        return None
    n = min(_n(t, {"method_label": m, "setting": setting}) for m in ("DynaHMRC", "CoELA"))
    shown = None if n < MIN_N else _beyond(qd, other, 1)
    tail = (", from too few episodes to tell." if n < MIN_N else
            {True: ".", None: ", within CoELA's interval: too close to tell.",
             False: _not(backend, "the paper's advantage here")}[shown])
    return _finding(f"DynaHMRC beats CoELA under {setting} (paper Fig. 7)",
                    [f"Under {setting} DynaHMRC succeeds in ", qd, " of episodes, CoELA in ", *other, tail], shown)


def centralized_gap(t: pd.DataFrame, backend: str) -> Finding | None:
    """Decentralized DynaHMRC stays ahead of centralized COHERENT as the team grows (paper Tables
    IX-X), static tasks; shown when at every team size :func:`beyond` holds, not shown when it fails
    at one, else too close to tell."""
    st = t[t["setting"] == "Static"]
    sizes = sorted(int(n) for n in set(st["n_types"]))
    parts: list[Any] = []
    verdicts = []
    for n in sizes:
        qd = quote(st, "centralized", {"method_label": "DynaHMRC", "n_types": n, "setting": "Static"},
                   "success_mean", PCT)
        other = _mean_ci(st, "centralized", {"method_label": "COHERENT", "n_types": n, "setting": "Static"},
                         "success")
        if qd is None or other is None:
            continue
        verdicts.append(_beyond(qd, other, 1))
        parts += [", " if parts else "", qd, " against ", other[0], f" with {n} robot types"]
    if not parts:
        return None
    claim = "DynaHMRC beats centralized COHERENT at every team size (paper Tables IX-X)"
    if int(st["n"].min()) < MIN_N:
        return _finding(claim, ["In static tasks DynaHMRC's and COHERENT's success rates are ", *parts,
                                ", from too few episodes to tell."], None)
    shown = False if False in verdicts else None if None in verdicts else True
    lead = {True: "In static tasks DynaHMRC succeeds more often than centralized COHERENT at every team size: ",
            None: "In static tasks DynaHMRC's and COHERENT's success rates are too close to tell at one team size: ",
            False: "In static tasks DynaHMRC's and COHERENT's success rates are "}[shown]
    tail = _not(backend, "the paper's lead at every size") if shown is False else "."
    return _finding(claim, [lead, *parts, tail], shown)


def paired_effect(t: pd.DataFrame, setting: str, metric: str, backend: str) -> Finding | None:
    """DynaHMRC minus CoELA on matched tasks (appendix paired comparison: the paper's fine-tuned
    DynaHMRC succeeds more and takes fewer steps); :func:`verdict` of the paired bootstrap
    interval in the paper's direction (:data:`PAPER_SIGN`), at least :data:`MIN_N` pairs."""
    where = {"setting": setting, "metric": NAMES[metric]}
    qs = [quote(t, "paired", where, c, _DIFF[metric]) for c in ("mean_diff", "ci_low", "ci_high")]
    qp = quote(t, "paired", where, "p_floor", "{:.3f}")
    rows = t[(t["setting"] == setting) & (t["metric"] == NAMES[metric])]
    if qs[0] is None or not len(rows):
        return None
    n = int(rows["n_pairs"].iloc[0])
    if qs[1] is None or qs[2] is None or qp is None:
        return _finding(f"DynaHMRC beats CoELA on {NAMES[metric]} (appendix paired comparison)",
                        [f"{setting} tasks, DynaHMRC minus CoELA in {NAMES[metric]}: ", qs[0],
                         f" over {n} paired tasks, too few to tell."], None)
    shown = verdict(qs[1].value, qs[2].value, PAPER_SIGN[metric], n=n, min_n=MIN_N)
    p = "<" if float(rows["p_value"].iloc[0]) < float(rows["p_floor"].iloc[0]) else "= "
    tail = {True: ".", None: ": the interval holds no difference, too few tasks to tell." if n >= MIN_N
            else ": too few tasks to tell.", False: _not(backend, "the paper's direction")}[shown]
    return _finding(f"DynaHMRC beats CoELA on {NAMES[metric]} (appendix paired comparison)",
                    [f"{setting} tasks, DynaHMRC minus CoELA in {NAMES[metric]}: ", qs[0], " [", qs[1], ", ", qs[2],
                     f"] over {n} paired tasks (p {p}", qp, ")", tail], shown)


def election_first_round(t: pd.DataFrame) -> Finding | None:
    """Most elections end in the first round (appendix leader election, paper Fig. 14): shown when
    more than half do, from at least :data:`MIN_N` elections."""
    qs = [quote(t, "election", {"row": 0}, c, PCT) for c in ("first_round", "within_two", "referee")]
    if any(q is None for q in qs):
        return None
    n = int(t["n"].iloc[0])
    shown = None if n < MIN_N else qs[0].value > 0.5
    tail = ", too few to tell." if shown is None else "." if shown else ", not most as in the paper."
    return _finding("most elections end in the first round (appendix leader election)",
                    [qs[0], " of elections end in the first round, ", qs[1], " within two and ", qs[2],
                     f" go to the referee, over {n} elections", tail], shown)


def limits(backend: str, offline: bool, has_search: bool) -> list[str]:
    """What this run does not show (sentences for the headline)."""
    out = []
    if offline:
        out.append(f"Every robot is played by the {backend} rules: the numbers show how the framework's stages "
                   "and feedback work in this world, not how GPT-4o or a fine-tuned Qwen3-4B would do.")
        out.append("The paper's model comparisons (DynaHMRC with GPT-4o against the fine-tuned model and other "
                   "LLMs) and its token costs need a model backend.")
    if not has_search:
        out.append("This run has no search baselines (MCTS).")
    out.append("Real-robot experiments are not reproduced.")
    return out
