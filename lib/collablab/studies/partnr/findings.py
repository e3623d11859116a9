"""Sentences about a partner-information run, written from its result tables
(observe_share_predict.txt §4.2-4.5, appendix A.3-A.5).

Each function takes long result tables built by :mod:`.report` (each with a ``backend``
column) and the backend to write about (default: the table's only backend) and returns a
:class:`~collablab.analysis.findings.Finding` (or a list of them) whose wording follows the
numbers it quotes. Every sentence starts with the backend label; an offline run says so
("Offline (heuristic planner)"), so heuristic numbers are never read as findings about LLMs;
where the run does not show the paper's observation the sentence says "In this run the
<backend> backend does not show ...". Each docstring states the paper's claim it checks and
when each wording is chosen. Numbers are compared as printed (rates to one decimal of a
percent, steps to the step).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ...analysis.findings import OFFLINE_BACKENDS, Finding, Quote, backend_of, lead, quote, select_rows

__all__ = ["FORMATS", "LABELS", "ChannelPair", "channel_directions", "channel_pair", "combined_context_tops",
           "completion_gap_widens", "conditionals_hold", "context_helps_type_more", "effort_remains",
           "full_obs_shortens", "ke_shortens_episodes", "ke_without_oas", "most_efficient_context", "oana_effort",
           "oana_lowers_success", "oana_raises_mentions", "oana_under_full_obs", "oas_reduces_effort",
           "oas_under_full_obs", "parameter_bottleneck", "role_asymmetries", "strict_lowers_type", "tested_effects"]

#: How sentences name the per-condition metrics of :data:`.report.METRICS`.
LABELS = {"SR": "Success Rate", "PC": "Percent Complete", "PC_failed": "Percent Complete of failed episodes",
          "PC_SR_gap": "the gap between Percent Complete and Success Rate", "steps": "simulation steps",
          "cycles": "planning cycles", "EE": "Extraneous Effort", "AS": "Action Success", "offloading": "Task Offloading",
          "mention_R": "the robot's Other-Agent Mention Ratio", "mention_H": "the human's Other-Agent Mention Ratio",
          "AS_R": "the robot's Action Success", "AS_H": "the human's Action Success"}
#: How each metric is printed (rates as percent to one decimal, steps to the step).
FORMATS = {"steps": "{:.0f}", "cycles": "{:.1f}"}
PCT = "{:.1%}"
PTS = "{:+.1f}"
REL = "{:+.0%}"
CE = "channel_effects"


def _fmt(metric: str) -> str:
    return FORMATS.get(metric, PCT)


def _on(b: str) -> str:
    """How a sentence opens: offline runs say so, model runs name the model."""
    if {x.split(":")[0] for x in b.split(",")} <= OFFLINE_BACKENDS:
        return "Offline (heuristic planner)" if b == "heuristic" else f"Offline ({b} policy)"
    return f"With the {b} planner"


def _not(b: str, what: str) -> str:
    return f"In this run the {b} backend does not show {what}"


def _pick(t: pd.DataFrame | None, backend: str | None) -> tuple[str, pd.DataFrame]:
    """The backend to write about and its rows of ``t``."""
    if t is None or not len(t):
        return backend or backend_of(t), pd.DataFrame(columns=list(t.columns) if t is not None else ["backend"])
    b = backend or backend_of(t)
    return b, t[t["backend"] == b]


def _missing(b: str, claim: str, what: str) -> Finding:
    return Finding(claim, lead(b, f"Not checked ({claim}): this run has {what}."), None)


def _k_of(k: int, n: int) -> str:
    return f"{k} of {n}"


@dataclass(frozen=True)
class ChannelPair:
    """One pair of conditions differing in one channel, one metric: the two quoted means and the
    relative change (None when the table has no such row)."""

    channel: str
    off: str
    on: str
    metric: str
    off_q: Quote
    on_q: Quote
    rel_q: Quote | None

    @property
    def move(self) -> int:
        """-1 lower with the channel on, +1 higher, 0 the same (as printed)."""
        a, z = self.off_q.shown_value, self.on_q.shown_value
        return (z > a) - (z < a)

    @property
    def quotes(self) -> tuple[Quote, ...]:
        return tuple(q for q in (self.off_q, self.on_q, self.rel_q) if q is not None)

    def text(self, rel: bool = False) -> str:
        """``"3745 (Obj) to 3237 (KE, -14%)"``."""
        tail = f", {self.rel_q.text}" if rel and self.rel_q is not None else ""
        return f"{self.off_q.text} ({self.off}) to {self.on_q.text} ({self.on}{tail})"


def channel_pair(ce: pd.DataFrame, b: str, channel: str, off: str, metric: str) -> ChannelPair | None:
    """The pair of ``channel_effects`` turning ``channel`` on from condition ``off``, for ``metric``."""
    where = {"backend": b, "channel": channel, "off": off, "metric": metric}
    rows = select_rows(ce, where)
    if not len(rows):
        return None
    a, z = quote(ce, CE, where, "off_value", _fmt(metric)), quote(ce, CE, where, "on_value", _fmt(metric))
    if a is None or z is None:
        return None
    return ChannelPair(channel, off, str(rows["on"].iloc[0]), metric, a, z, quote(ce, CE, where, "rel", REL))


def _pairs(ce: pd.DataFrame, b: str, channel: str, metric: str, offs: Sequence[str] | None = None) -> list[ChannelPair]:
    rows = select_rows(ce, {"backend": b, "channel": channel, "metric": metric})
    names = list(offs) if offs is not None else list(dict.fromkeys(rows["off"]))
    return [p for p in (channel_pair(ce, b, channel, o, metric) for o in names) if p is not None]


def _quotes(pairs: Sequence[ChannelPair], rel: bool = False) -> tuple[Quote, ...]:
    return tuple(q for p in pairs for q in (p.quotes if rel else (p.off_q, p.on_q)))


# -- §4.2: task outcomes and coordination -----------------------------------------------------------

def ke_shortens_episodes(ce: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.2: KE cuts episode length (simulation steps) by up to 25% with little change in Success
    Rate. Checked without OANA, under partial observability, at the object-only baseline (Obj ->
    KE) and with OAS (OAS -> OAS+KE). Shown when steps are lower in both pairs; the sentence
    quotes the steps, their relative change and Success Rate in each pair."""
    claim = "§4.2: KE shortens episodes"
    b, ce = _pick(ce, backend)
    steps, sr = _pairs(ce, b, "KE", "steps", ("Obj", "OAS")), _pairs(ce, b, "KE", "SR", ("Obj", "OAS"))
    if not steps:
        return _missing(b, claim, "no pair of conditions without and with KE (without OANA)")
    where = ["at the object-only baseline" if p.off == "Obj" else "with OAS" for p in steps]
    detail = " and ".join(f"from {p.text(rel=True)} {w}" for p, w in zip(steps, where))
    srs = " and ".join(p.text() for p in sr)
    quotes = _quotes(steps, rel=True) + _quotes(sr)
    paper = "(the paper: up to 25% fewer steps, with little change in Success Rate)"
    if all(p.move < 0 for p in steps):
        return Finding(claim, lead(b, f"{_on(b)}, KE lowers mean simulation steps {detail}; Success Rate "
                                      f"{srs} {paper}."), True, quotes)
    return Finding(claim, lead(b, f"{_not(b, 'KE shortening every episode pair')}: mean simulation steps go "
                                  f"{detail}; Success Rate {srs} {paper}."), False, quotes)


def oas_reduces_effort(ce: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.2: OAS reduces Extraneous Effort for every planner. Checked without OANA under partial
    observability, without KE (Obj -> OAS) and with it (KE -> OAS+KE). Shown when Extraneous
    Effort is lower in both pairs."""
    claim = "§4.2: OAS reduces Extraneous Effort"
    b, ce = _pick(ce, backend)
    ee = _pairs(ce, b, "OAS", "EE", ("Obj", "KE"))
    if not ee:
        return _missing(b, claim, "no pair of conditions without and with OAS (without OANA)")
    detail = " and ".join(f"from {p.text()}" for p in ee)
    paper = "(the paper: for every planner)"
    if all(p.move < 0 for p in ee):
        return Finding(claim, lead(b, f"{_on(b)}, OAS lowers Extraneous Effort {detail} {paper}."), True, _quotes(ee))
    return Finding(claim, lead(b, f"{_not(b, 'OAS lowering Extraneous Effort in every pair')}: it goes {detail} "
                                  f"{paper}."), False, _quotes(ee))


def most_efficient_context(outcomes: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.2: OAS + KE is the most efficient setting (fewest simulation steps) for three of four
    planners. Checked over the four contexts without OANA; shown when OAS+KE has the fewest steps
    (alone or tied, as printed)."""
    claim = "§4.2: OAS + KE is the most efficient context"
    b, t = _pick(outcomes, backend)
    rows = t[~t["oana"].astype(bool)] if len(t) else t
    if "OAS+KE" not in set(rows.get("context", [])) or len(rows) < 2:
        return _missing(b, claim, "no OAS+KE beside another context without OANA")
    qs = [(r.context, quote(outcomes, "outcomes", {"backend": b, "condition": r.condition}, "steps", "{:.0f}"))
          for r in rows.itertuples()]
    qs = [(c, q) for c, q in qs if q is not None]
    low = min(q.shown_value for _, q in qs)
    best = [c for c, q in qs if q.shown_value == low]
    detail = ", ".join(f"{c} {q.text}" for c, q in qs)
    quotes = tuple(q for _, q in qs)
    if "OAS+KE" in best:
        tie = f" (tied with {', '.join(c for c in best if c != 'OAS+KE')})" if len(best) > 1 else ""
        return Finding(claim, lead(b, f"{_on(b)}, OAS+KE is the most efficient context{tie}: mean simulation steps "
                                      f"without OANA are {detail} (the paper: for three of four planners)."), True, quotes)
    return Finding(claim, lead(b, f"{_not(b, 'OAS+KE as the most efficient context')}: {' and '.join(best)} has the "
                                  f"fewest mean simulation steps without OANA ({detail})."), False, quotes)


def ke_without_oas(ce: pd.DataFrame, backend: str | None = None) -> Finding:
    """§A.3.1: KE without OAS raises Extraneous Effort over the object-only baseline (both Llama
    planners; shared object knowledge reveals targets without showing that the partner already
    acts on them). Shown when Extraneous Effort is higher with KE alone than with Obj."""
    claim = "§A.3.1: KE without OAS raises Extraneous Effort"
    b, ce = _pick(ce, backend)
    p = channel_pair(ce, b, "KE", "Obj", "EE")
    if p is None:
        return _missing(b, claim, "no Obj and KE pair")
    if p.move > 0:
        return Finding(claim, lead(b, f"{_on(b)}, KE without OAS raises Extraneous Effort from {p.text()}, as for both "
                                      "Llama planners in the paper."), True, p.quotes[:2])
    return Finding(claim, lead(b, f"{_not(b, 'KE without OAS raising Extraneous Effort')}: it goes from {p.text()}."),
                   False, p.quotes[:2])


def _oana_pairs(ce: pd.DataFrame, b: str, metric: str, observability: str = "partial") -> list[ChannelPair]:
    pairs = _pairs(ce, b, "OANA", metric)
    return [p for p in pairs if p.off.startswith("Full:") == (observability == "full")]


def _oana_lowers(ce: pd.DataFrame, backend: str | None, metric: str, name: str, paper: str) -> Finding:
    """OANA lowers ``metric`` (named ``name``) in most contexts under partial observability (more
    than half); ``paper`` is the paper's count."""
    claim = f"§4.2: OANA lowers {name}"
    b, ce = _pick(ce, backend)
    pairs = _oana_pairs(ce, b, metric)
    if not pairs:
        return _missing(b, claim, "no context without and with OANA")
    k = sum(p.move < 0 for p in pairs)
    detail = "; ".join(p.text() for p in pairs)
    body = f"in {_k_of(k, len(pairs))} contexts ({detail}; the paper: {paper})"
    if 2 * k > len(pairs):
        return Finding(claim, lead(b, f"{_on(b)}, OANA lowers {name} {body}."), True, _quotes(pairs))
    return Finding(claim, lead(b, f"{_not(b, f'OANA lowering {name} in most contexts')}: it is lower {body}."),
                   False, _quotes(pairs))


def oana_lowers_success(ce: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.2: OANA lowers Success Rate in 15 of 16 model x context pairs. Checked over the four
    contexts under partial observability; shown when Success Rate is lower with OANA in most of
    them (more than half)."""
    return _oana_lowers(ce, backend, "SR", "Success Rate", "15 of 16 pairs")


def oana_raises_mentions(ce: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.2: OANA raises the Other-Agent Mention Ratio from 10-53% to 55-100%. Checked per agent
    over the contexts under partial observability; shown when the ratio is higher with OANA in
    every context x agent pair. The sentence quotes the lowest and highest ratio without and
    with OANA."""
    claim = "§4.2: OANA raises the Other-Agent Mention Ratio"
    b, ce = _pick(ce, backend)
    pairs = [p for m in ("mention_R", "mention_H") for p in _oana_pairs(ce, b, m)]
    if not pairs:
        return _missing(b, claim, "no context without and with OANA")
    k = sum(p.move > 0 for p in pairs)
    offs, ons = sorted((p.off_q for p in pairs), key=lambda q: q.value), sorted((p.on_q for p in pairs),
                                                                                 key=lambda q: q.value)
    rng = (f"from {offs[0].text}–{offs[-1].text} without it to {ons[0].text}–{ons[-1].text} with it "
           "(robot and human; the paper: from 10–53% to 55–100%)")
    quotes = (offs[0], offs[-1], ons[0], ons[-1])
    if k == len(pairs):
        return Finding(claim, lead(b, f"{_on(b)}, OANA raises the Other-Agent Mention Ratio in all {len(pairs)} "
                                      f"context x agent pairs, {rng}."), True, quotes)
    return Finding(claim, lead(b, f"{_not(b, 'OANA raising the Other-Agent Mention Ratio in every pair')}: it rises "
                                  f"in {_k_of(k, len(pairs))} context x agent pairs, {rng}."), False, quotes)


def oana_effort(ce: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.2: with OANA, Extraneous Effort falls in 11 of 16 model x context pairs (so the added
    failures are not mainly duplication). Checked over the contexts under partial observability;
    shown when Extraneous Effort is lower with OANA in most of them."""
    return _oana_lowers(ce, backend, "EE", "Extraneous Effort", "11 of 16 pairs")


def completion_gap_widens(ce: pd.DataFrame, backend: str | None = None) -> Finding:
    """§A.3.1: the gap between Percent Complete and Success Rate widens under prediction in 15 of
    16 model x context pairs. Checked over the contexts under partial observability; shown when
    the gap is wider with OANA in most of them."""
    claim = "§A.3.1: OANA widens the PC − SR gap"
    b, ce = _pick(ce, backend)
    pairs = _oana_pairs(ce, b, "PC_SR_gap")
    if not pairs:
        return _missing(b, claim, "no context without and with OANA")
    k = sum(p.move > 0 for p in pairs)
    detail = "; ".join(p.text() for p in pairs)
    if 2 * k > len(pairs):
        return Finding(claim, lead(b, f"{_on(b)}, the gap between Percent Complete and Success Rate widens with OANA "
                                      f"in {_k_of(k, len(pairs))} contexts ({detail}; the paper: 15 of 16 pairs)."),
                       True, _quotes(pairs))
    return Finding(claim, lead(b, f"{_not(b, 'OANA widening the PC − SR gap in most contexts')}: it widens in "
                                  f"{_k_of(k, len(pairs))} ({detail}; the paper: 15 of 16 pairs)."), False,
                   _quotes(pairs))


def channel_directions(dirs: pd.DataFrame, channel: str, backend: str | None = None,
                       metrics: Sequence[str] = ("SR", "PC", "steps", "cycles", "EE")) -> Finding:
    """Which way ``channel`` moves each metric over all its pairs of conditions (the other
    channels held fixed; :func:`.report.directions`): per metric, in how many pairs it is lower
    and higher with the channel on. Descriptive (``shown`` None): the paper's directional claims
    are checked by the other functions."""
    claim = f"which way {channel} moves each metric"
    b, _ = _pick(dirs, backend)
    parts, quotes, n = [], [], 0
    for m in metrics:
        w = {"backend": b, "channel": channel, "metric": m}
        lo, hi = quote(dirs, "directions", w, "lower", "{:.0f}"), quote(dirs, "directions", w, "higher", "{:.0f}")
        if lo is None or hi is None:
            continue
        n = int(select_rows(dirs, w)["pairs"].iloc[0])
        parts.append(f"{LABELS[m]} lower in {lo.text} and higher in {hi.text}")
        quotes += [lo, hi]
    if not parts:
        return _missing(b, claim, f"no pair of conditions without and with {channel}")
    name = "full observability" if channel == "Full" else channel
    held = "partial against full observability, the channels held fixed" if channel == "Full" else \
        "the other channels held fixed"
    pairs = f"{n} pair{'' if n == 1 else 's'}"
    return Finding(claim, lead(b, f"{_on(b)}, over {pairs} of conditions ({held}), turning on {name} leaves "
                                  f"{'; '.join(parts)}."), None, tuple(quotes))


# -- §4.3: role asymmetry ---------------------------------------------------------------------------

#: Per asymmetry of :data:`.report.ROLE_COUNTS`: (format of its value, how the value is named,
#: the paper's reading: "most" (shown when it holds in more than half), "all", or None (no claim)).
_ROLES = {
    "robot_first": ("{:.0f}", "the robot's mean lead {} steps", "most"),
    "human_more_extra_planning": (PTS, "mean gap human − robot {} points", "most"),
    "offloading_over_half": (PCT, "range {}", "all"),
    "robot_as_at_least": (PTS, "mean gap robot − human {} points", "most"),
    "robot_more_cycles": ("{:+.1f}", "mean gap robot − human {} cycles", None),
    "human_mentions_more": (PTS, "mean gap human − robot {} points", "all"),
}


def role_asymmetries(counts: pd.DataFrame, asym: pd.DataFrame | None = None,
                     backend: str | None = None) -> list[Finding]:
    """§4.3, §A.3.2, one sentence per asymmetry of :data:`.report.ROLE_COUNTS` over the
    partial-observability conditions: the robot's first object interaction comes earlier (28 of
    32 runs), the human has more Extra Planning (25 of 32), Task Offloading exceeds 50% (all 32),
    the robot's Action Success is at least the human's (28 of 32), the human mentions the partner
    more without OANA (all 16); who plans more cycles depends on the planner (no claim). Shown
    when it holds in more than half of the conditions ("most") or in all ("all")."""
    b, t = _pick(counts, backend)
    out = []
    for key, (fmt, named, rule) in _ROLES.items():
        claim = f"§4.3: {key.replace('_', ' ')}"
        rows = t[t["asymmetry"] == key] if len(t) else t
        if not len(rows) or int(rows["n"].iloc[0]) == 0:
            out.append(_missing(b, claim, "no partial-observability condition with both agents' values"))
            continue
        r = rows.iloc[0]
        k, n = int(r["k"]), int(r["n"])
        where = {"backend": b, "asymmetry": key}
        if key == "offloading_over_half":
            lo, hi = quote(counts, "role_counts", where, "low", fmt), quote(counts, "role_counts", where, "high", fmt)
            quotes = tuple(q for q in (lo, hi) if q)
            value = named.format(f"{lo.text}–{hi.text}") if lo and hi else ""
        else:
            q = quote(counts, "role_counts", where, "mean", fmt)
            quotes = (q,) if q else ()
            value = named.format(q.text) if q else ""
        scope = "conditions without OANA" if key == "human_mentions_more" else "conditions"
        what = str(r["label"]).replace(" (without OANA)", "")
        body = f"{what} in {_k_of(k, n)} partial-observability {scope} ({value}; the paper: {r['paper']})"
        if rule is None:
            out.append(Finding(claim, lead(b, f"{_on(b)}, {body}."), None, quotes))
            continue
        shown = (2 * k > n) if rule == "most" else (k == n)
        if shown:
            out.append(Finding(claim, lead(b, f"{_on(b)}, {body}."), True, quotes))
        else:
            want = "in most conditions" if rule == "most" else "in every condition"
            out.append(Finding(claim, lead(b, f"{_not(b, f'that {what} {want}')}: it holds in {_k_of(k, n)} "
                                              f"{scope} ({value}; the paper: {r['paper']})."), False, quotes))
    return out


# -- §4.4: partner prediction -------------------------------------------------------------------------

def context_helps_type_more(gain: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.4: shared context (Obj -> OAS+KE, both with OANA) improves Action Type accuracy more than
    conditional principal-parameter accuracy (+14.7/+14.6 vs +4.2/+1.0 points, robot/human; union
    target, partial observability). Shown when the Action Type gain is larger for both agents."""
    claim = "§4.4: shared context helps Action Type more than its parameters"
    b, t = _pick(gain, backend)
    rows = t[(t["context"] == "OAS+KE") & (t["observability"] == "partial")] if len(t) else t
    if not len(rows):
        return _missing(b, claim, "no Obj+OANA and OAS+KE+OANA pair")
    cells = []
    for agent in [a for a in ("robot", "human") if a in set(rows["agent"])]:
        w = {"backend": b, "observability": "partial", "context": "OAS+KE", "agent": agent}
        ty = quote(gain, "prediction_gain", w, "d_type_acc", PTS)
        cp = quote(gain, "prediction_gain", w, "d_cond_principal", PTS)
        if ty and cp:
            cells.append((agent, ty, cp))
    if not cells:
        return _missing(b, claim, "no prediction accuracy in Obj+OANA or OAS+KE+OANA")
    detail = "; ".join(f"{a}: Action Type {ty.text} points, conditional principal parameter {cp.text} points"
                       for a, ty, cp in cells)
    quotes = tuple(q for _, ty, cp in cells for q in (ty, cp))
    paper = "(the paper: about +15/+15 against +4/+1 points, robot/human)"
    if all(ty.shown_value > cp.shown_value for _, ty, cp in cells):
        return Finding(claim, lead(b, f"{_on(b)}, moving from Obj+OANA to OAS+KE+OANA raises Action Type accuracy more "
                                      f"than conditional principal-parameter accuracy ({detail}) {paper}."), True, quotes)
    return Finding(claim, lead(b, f"{_not(b, 'shared context raising Action Type accuracy more than its parameters')}"
                                  f" for both agents ({detail}) {paper}."), False, quotes)


def combined_context_tops(pred: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.4, §A.3.3: OAS + KE gives the top Action Type accuracy for every model and agent (union
    target, partial observability). Shown when OAS+KE+OANA has the highest Action Type accuracy
    (alone or tied, as printed) for both agents."""
    claim = "§4.4: OAS + KE gives the top Action Type accuracy"
    b, t = _pick(pred, backend)
    rows = t[t["observability"] == "partial"] if len(t) else t
    if not len(rows) or "OAS+KE" not in set(rows["context"]) or rows["context"].nunique() < 2:
        return _missing(b, claim, "no OAS+KE+OANA beside another OANA condition")
    parts, quotes, tops = [], [], 0
    agents = [a for a in ("robot", "human") if a in set(rows["agent"])]
    for agent in agents:
        qs = [(c, quote(pred, "prediction", {"backend": b, "observability": "partial", "context": c, "agent": agent},
                        "type_acc", PCT)) for c in rows[rows["agent"] == agent]["context"]]
        qs = [(c, q) for c, q in qs if q is not None]
        if not qs:
            continue
        hi = max(q.shown_value for _, q in qs)
        best = [c for c, q in qs if q.shown_value == hi]
        tops += "OAS+KE" in best
        parts.append(f"{agent}: " + ", ".join(f"{c} {q.text}" for c, q in qs))
        quotes += [q for _, q in qs]
    detail = "; ".join(parts)
    if tops == len(agents):
        return Finding(claim, lead(b, f"{_on(b)}, OAS+KE gives the top Action Type accuracy (union target) for both "
                                      f"agents ({detail}), as for every model and agent in the paper."), True,
                       tuple(quotes))
    return Finding(claim, lead(b, f"{_not(b, 'OAS+KE giving the top Action Type accuracy for both agents')}: it does "
                                  f"for {tops} of {len(agents)} (union target; {detail})."), False, tuple(quotes))


def parameter_bottleneck(means: pd.DataFrame, backend: str | None = None) -> Finding:
    """§A.3.3: among predictions with the right action type only 52.2% have every parameter
    right, while 84.8% of parameter-correct predictions have the right type (union target, mean
    over cells). Shown when type-given-all exceeds the conditional all-parameter accuracy."""
    claim = "§A.3.3: parameters are the bottleneck of prediction"
    b, _ = _pick(means, backend)
    w = {"backend": b, "observability": "partial"}
    ca = quote(means, "prediction_means", w, "cond_all_union", PCT)
    tga = quote(means, "prediction_means", w, "type_given_all_union", PCT)
    if ca is None or tga is None:
        return _missing(b, claim, "no scored prediction under partial observability")
    body = (f"of predictions with the right action type {ca.text} have every parameter right, while "
            f"{tga.text} of predictions with every parameter right have the right type (union target, mean over "
            "OANA conditions and agents; the paper: about 52% and 85%)")
    if tga.shown_value > ca.shown_value:
        return Finding(claim, lead(b, f"{_on(b)}, parameters are the bottleneck: {body}."), True, (ca, tga))
    return Finding(claim, lead(b, f"{_not(b, 'parameters as the bottleneck of prediction')}: {body}."), False, (ca, tga))


# -- §4.5: strict target and full observability -----------------------------------------------------

def strict_lowers_type(means: pd.DataFrame, gap: pd.DataFrame | None = None, backend: str | None = None) -> Finding:
    """§4.5, §A.5.1: under the strict next-action target Action Type accuracy falls (by 16.0
    points, 36.5% relative, on average). Checked under partial observability; shown when the mean
    union − strict gap is positive; the sentence counts the cells where strict is lower."""
    claim = "§4.5: the strict target lowers Action Type accuracy"
    b, t = _pick(means, backend)
    rows = t[t["observability"] == "partial"] if len(t) else t
    if not len(rows):
        return _missing(b, claim, "no scored prediction under partial observability")
    w = {"backend": b, "observability": "partial"}
    u = quote(means, "prediction_means", w, "type_acc_union", PCT)
    s = quote(means, "prediction_means", w, "type_acc_strict", PCT)
    g = quote(means, "prediction_means", w, "type_gap", "{:.1f}")
    rel = quote(means, "prediction_means", w, "type_rel", "{:.1%}")
    quotes = tuple(q for q in (u, s, g, rel) if q)
    if u is None or s is None or g is None:
        return _missing(b, claim, "no Action Type accuracy under both targets")
    k, n = int(rows["cells_lower"].iloc[0]), int(rows["cells"].iloc[0])
    body = (f"mean Action Type accuracy {u.text} (union) against {s.text} (strict), {g.text} points"
            + (f" ({rel.text} relative)" if rel else "") + f" lower; strict is lower in {_k_of(k, n)} condition x "
            "agent cells (the paper: 16 points on average)")
    if g.shown_value > 0:
        return Finding(claim, lead(b, f"{_on(b)}, the strict next-action target lowers Action Type accuracy: {body}."),
                       True, quotes)
    return Finding(claim, lead(b, f"{_not(b, 'the strict target lowering Action Type accuracy')}: {body}."), False,
                   quotes)


def conditionals_hold(means: pd.DataFrame, backend: str | None = None) -> Finding:
    """§A.5.1: the conditional all-parameter accuracy barely moves between targets (52.2% ->
    52.4%) while unconditional Action Type accuracy differs by 16 points. Shown when the mean
    conditional all-parameter accuracy moves less than Action Type accuracy (as printed)."""
    claim = "§A.5.1: conditional accuracy holds across targets"
    b, _ = _pick(means, backend)
    w = {"backend": b, "observability": "partial"}
    qs = {k: quote(means, "prediction_means", w, k, PCT) for k in
          ("cond_all_union", "cond_all_strict", "type_acc_union", "type_acc_strict")}
    if any(q is None for q in qs.values()):
        return _missing(b, claim, "no conditional all-parameter accuracy under both targets")
    ca = abs(qs["cond_all_union"].shown_value - qs["cond_all_strict"].shown_value)
    ty = abs(qs["type_acc_union"].shown_value - qs["type_acc_strict"].shown_value)
    body = (f"conditional all-parameter accuracy {qs['cond_all_union'].text} (union) and {qs['cond_all_strict'].text} "
            f"(strict) against Action Type accuracy {qs['type_acc_union'].text} and {qs['type_acc_strict'].text} "
            "(the paper: about 52% under both targets against a 16-point gap in Action Type accuracy)")
    quotes = tuple(qs.values())
    if ca < ty:
        return Finding(claim, lead(b, f"{_on(b)}, the conditional accuracy moves less between targets than Action Type "
                                      f"accuracy: {body}."), True, quotes)
    return Finding(claim, lead(b, f"{_not(b, 'the conditional accuracy holding across targets')}: {body}."), False,
                   quotes)


def full_obs_shortens(fvp: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.5, §A.4.1: full observability shortens episodes by 43% at the object-only baseline (and
    50-53% with OAS). Checked without OANA; shown when Full:Obj has fewer mean steps than Obj."""
    claim = "§4.5: full observability shortens episodes"
    b, t = _pick(fvp, backend)
    rows = t[~t["oana"].astype(bool)] if len(t) else t
    if not len(rows) or "Obj" not in set(rows["context"]):
        return _missing(b, claim, "no Obj and Full:Obj pair")
    parts, quotes, base = [], [], None
    for c in [c for c in ("Obj", "OAS") if c in set(rows["context"])]:
        w = {"backend": b, "context": c, "oana": False}
        p, f = (quote(fvp, "full_vs_partial", w, k, "{:.0f}") for k in ("steps_partial", "steps_full"))
        cut = quote(fvp, "full_vs_partial", w, "steps_cut", "{:.0%}")
        if p is None or f is None:
            continue
        parts.append(f"{p.text} → {f.text} steps" + (f" ({cut.text} shorter)" if cut else "") +
                     (" at the object-only baseline" if c == "Obj" else " with OAS"))
        quotes += [q for q in (p, f, cut) if q]
        base = (p, f) if c == "Obj" else base
    if base is None:
        return _missing(b, claim, "no steps for Obj and Full:Obj")
    detail = "; ".join(parts) + " (the paper: 43% at the baseline, 50–53% with OAS)"
    if base[1].shown_value < base[0].shown_value:
        return Finding(claim, lead(b, f"{_on(b)}, full observability shortens episodes: {detail}."), True, tuple(quotes))
    return Finding(claim, lead(b, f"{_not(b, 'full observability shortening episodes')}: {detail}."), False,
                   tuple(quotes))


def effort_remains(fvp: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.5: most Extraneous Effort remains under full observability (about 94% for Llama 8B and
    86% for Llama 70B at the object-only baseline). Shown when Full:Obj keeps more than half of
    Obj's Extraneous Effort (worded "does not fall" when it keeps all of it or more)."""
    claim = "§4.5: most Extraneous Effort remains under full observability"
    b, _ = _pick(fvp, backend)
    w = {"backend": b, "context": "Obj", "oana": False}
    p, f = quote(fvp, "full_vs_partial", w, "EE_partial", PCT), quote(fvp, "full_vs_partial", w, "EE_full", PCT)
    kept = quote(fvp, "full_vs_partial", w, "EE_retained", "{:.0%}")
    if p is None or f is None or kept is None:
        return _missing(b, claim, "no Extraneous Effort for Obj and Full:Obj")
    body = (f"Extraneous Effort is {p.text} with Obj and {f.text} with Full:Obj, {kept.text} of the partial "
            "level (the paper: about 94% and 86% for the two Llama planners)")
    if kept.shown_value >= 1:
        return Finding(claim, lead(b, f"{_on(b)}, Extraneous Effort does not fall under full observability: {body}."),
                       True, (p, f, kept))
    if kept.shown_value > 0.5:
        return Finding(claim, lead(b, f"{_on(b)}, most Extraneous Effort remains under full observability: {body}."),
                       True, (p, f, kept))
    return Finding(claim, lead(b, f"{_not(b, 'most Extraneous Effort remaining under full observability')}: {body}."),
                   False, (p, f, kept))


def oana_under_full_obs(ce: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.5, §A.4.1: with full observability, OANA lowers Success Rate and Percent Complete in all
    four configurations. Shown when both are lower with OANA in every full-observability context."""
    claim = "§4.5: OANA lowers success under full observability"
    b, ce = _pick(ce, backend)
    sr, pc = _oana_pairs(ce, b, "SR", "full"), _oana_pairs(ce, b, "PC", "full")
    if not sr:
        return _missing(b, claim, "no full-observability context without and with OANA")
    detail = "; ".join(f"Success Rate {s.text()}, Percent Complete {p.off_q.text} → {p.on_q.text}"
                       for s, p in zip(sr, pc))
    quotes = _quotes(sr) + _quotes(pc)
    if all(p.move < 0 for p in (*sr, *pc)):
        return Finding(claim, lead(b, f"{_on(b)}, under full observability OANA lowers Success Rate and Percent Complete "
                                      f"in every context ({detail}), as in all four configurations of the paper."), True,
                       quotes)
    what = "OANA lowering both Success Rate and Percent Complete in every full-observability context"
    return Finding(claim, lead(b, f"{_not(b, what)}: "
                                  f"{detail}."), False, quotes)


def oas_under_full_obs(ce: pd.DataFrame, backend: str | None = None) -> Finding:
    """§4.5, §A.4.1: under full observability OAS no longer improves task quality (Success Rate,
    Percent Complete), though it still reduces Extraneous Effort. Checked without OANA; shown when
    neither Success Rate nor Percent Complete is higher with OAS."""
    claim = "§4.5: OAS no longer improves task quality under full observability"
    b, ce = _pick(ce, backend)
    sr, pc, ee = (channel_pair(ce, b, "OAS", "Full:Obj", m) for m in ("SR", "PC", "EE"))
    if sr is None or pc is None:
        return _missing(b, claim, "no Full:Obj and Full:OAS pair")
    detail = f"Success Rate {sr.text()}, Percent Complete {pc.off_q.text} → {pc.on_q.text}"
    if ee is not None:
        detail += f", Extraneous Effort {ee.off_q.text} → {ee.on_q.text}"
    quotes = sr.quotes[:2] + pc.quotes[:2] + (ee.quotes[:2] if ee else ())
    if sr.move <= 0 and pc.move <= 0:
        return Finding(claim, lead(b, f"{_on(b)}, under full observability OAS no longer improves task quality ({detail}), "
                                      "as in the paper."), True, quotes)
    return Finding(claim, lead(b, f"{_not(b, 'OAS ceasing to improve task quality under full observability')}: {detail}."),
                   False, quotes)


# -- the analysis tail (beyond the paper) ---------------------------------------------------------------

#: The contrasts :func:`tested_effects` reads: (channel, on, off, outcome, how the outcome is printed).
TESTED = (("KE", "KE", "Obj", "simulation_steps", "{:+.0f}"), ("KE", "OAS+KE", "OAS", "simulation_steps", "{:+.0f}"),
          ("OAS", "OAS", "Obj", "extraneous_effort", "{:+.1%}"), ("OAS", "OAS+KE", "KE", "extraneous_effort", "{:+.1%}"),
          ("Full", "Full:Obj", "Obj", "simulation_steps", "{:+.0f}"))
_OUTCOME = {"simulation_steps": "simulation steps", "extraneous_effort": "Extraneous Effort"}


def tested_effects(tests: pd.DataFrame, backend: str | None = None) -> Finding:
    """Beyond the paper (one run per configuration there): the paired tests of the analysis tail
    for the channel effects the other sentences name (KE on steps, OAS on Extraneous Effort,
    full observability on steps): mean paired difference, 95% paired-bootstrap CI and the
    Holm-adjusted sign-flip p. Descriptive (``shown`` None)."""
    claim = "paired tests of the main channel effects (beyond the paper)"
    b, _ = _pick(tests, backend)
    parts, quotes = [], []
    for channel, on, off, outcome, fmt in TESTED:
        w = {"backend": b, "channel": channel, "on": on, "off": off, "outcome": outcome, "test": "sign_flip"}
        est, lo, hi = (quote(tests, "channel_tests", w, c, fmt) for c in ("estimate", "ci_low", "ci_high"))
        p = quote(tests, "channel_tests", w, "p_adjusted", "{:.2g}")
        if est is None or p is None:
            continue
        n = int(select_rows(tests, w)["n"].iloc[0])
        ci = f", 95% CI {lo.text} to {hi.text}" if lo and hi else ""
        parts.append(f"{on} − {off} {_OUTCOME[outcome]} {est.text}{ci}, Holm p = {p.text} ({n} tasks)")
        quotes += [q for q in (est, lo, hi, p) if q]
    if not parts:
        return _missing(b, claim, "no paired test of these contrasts")
    return Finding(claim, lead(b, f"{_on(b)}, paired by task (mean paired difference, sign-flip test; the paper runs "
                                  f"each configuration once): {'; '.join(parts)}."), None, tuple(quotes))
