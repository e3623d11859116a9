"""Sentences about a partner-information run, written from its result tables
(observe_share_predict.txt §4.2-4.5, appendix A.3-A.5).

Each function takes long result tables built by :mod:`.report` (each with a ``backend``
column), the backend to write about (default: the table's only backend) and ``n``, the fewest
episodes any condition of the run has, and returns a
:class:`~collablab.analysis.findings.Finding` (or a list of them) whose wording follows the
numbers it quotes: one finding per sentence (a second sentence at most for the paper's
comparison), plain metric names, no backend label (the notebook's headline names the backend
once). Each docstring states the paper's claim it checks and when each wording is chosen.

The rule for ``shown`` (documented once, applied everywhere):

- a finding that rests on a paired interval (the analysis tail's :func:`paired_effect`) uses
  :func:`~collablab.analysis.findings.verdict` (at least :data:`MIN_EPISODES` tasks);
- a finding that rests on comparing condition means without an interval is "too few units to
  tell" (``shown`` None) when a condition has fewer than :data:`MIN_EPISODES` episodes, else
  shown (True) or not (False) by the comparison its docstring names. Numbers are compared as
  printed (rates to one decimal of a percent, steps to the step).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from ...analysis.findings import Finding, Quote, backend_of, quote, select_rows, verdict

__all__ = ["FORMATS", "LABELS", "MIN_EPISODES", "TESTED", "ChannelPair", "channel_directions", "channel_pair",
           "combined_context_tops", "completion_gap_widens", "conditionals_hold", "context_helps_type_more",
           "effort_remains", "full_obs_shortens", "ke_shortens_episodes", "ke_without_oas", "most_efficient_context",
           "oana_effort", "oana_lowers_success", "oana_raises_mentions", "oana_under_full_obs", "oas_reduces_effort",
           "oas_under_full_obs", "paired_effect", "parameter_bottleneck", "role_asymmetries", "strict_lowers_type"]

#: Below this many episodes in a condition a comparison of means is "too few units to tell".
MIN_EPISODES = 10
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


def _not(what: str) -> str:
    return f"This run does not show {what}"


def _pick(t: pd.DataFrame | None, backend: str | None) -> tuple[str, pd.DataFrame]:
    """The backend to write about and its rows of ``t``."""
    if t is None or not len(t):
        return backend or backend_of(t), pd.DataFrame(columns=list(t.columns) if t is not None else ["backend"])
    b = backend or backend_of(t)
    return b, t[t["backend"] == b]


def _missing(claim: str, what: str) -> Finding:
    return Finding(claim, f"Not checked ({claim}): this run has {what}.", None)


def _few(claim: str, what: str, n: int | None, detail: str, quotes: Sequence[Quote] = ()) -> Finding | None:
    """The "too few units to tell" finding when a condition has fewer than :data:`MIN_EPISODES`
    episodes (None otherwise): the numbers (``detail``, a sentence), then that they cannot tell."""
    if n is None or n >= MIN_EPISODES:
        return None
    return Finding(claim, f"{_cap(detail)} Too few episodes to tell whether {what} ({n} per condition, "
                          f"{MIN_EPISODES} needed).", None, tuple(quotes))


def _k_of(k: int, n: int) -> str:
    return f"{k} of {n}"


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


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

    def arrow(self) -> str:
        """``"80.0% → 70.0%"`` (the conditions named elsewhere)."""
        return f"{self.off_q.text} → {self.on_q.text}"


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

def ke_shortens_episodes(ce: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.2: KE cuts episode length (simulation steps) by up to 25% with little change in Success
    Rate. Checked without OANA, under partial observability, at the object-only baseline (Obj ->
    KE) and with OAS (OAS -> OAS+KE). Shown when steps are lower in both pairs; the first sentence
    quotes the steps and their relative change, the second Success Rate."""
    claim = "§4.2: KE shortens episodes"
    b, ce = _pick(ce, backend)
    steps, sr = _pairs(ce, b, "KE", "steps", ("Obj", "OAS")), _pairs(ce, b, "KE", "SR", ("Obj", "OAS"))
    if not steps:
        return _missing(claim, "no pair of conditions without and with KE (without OANA)")
    detail = " and ".join(p.text(rel=True) for p in steps)
    srs = " and ".join(p.arrow() for p in sr)
    quotes = _quotes(steps, rel=True) + _quotes(sr)
    tail = f" Success Rate goes {srs} (the paper: up to 25% fewer steps, little change in Success Rate)."
    if few := _few(claim, "KE shortens episodes", n, f"Mean simulation steps go from {detail}.{tail}", quotes):
        return few
    if all(p.move < 0 for p in steps):
        return Finding(claim, f"KE shortens episodes: mean simulation steps go from {detail}.{tail}", True, quotes)
    return Finding(claim, f"{_not('KE shortening every episode pair')}: mean simulation steps go from {detail}.{tail}",
                   False, quotes)


def oas_reduces_effort(ce: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.2: OAS reduces Extraneous Effort for every planner. Checked without OANA under partial
    observability, without KE (Obj -> OAS) and with it (KE -> OAS+KE). Shown when Extraneous
    Effort is lower in both pairs."""
    claim = "§4.2: OAS reduces Extraneous Effort"
    b, ce = _pick(ce, backend)
    ee = _pairs(ce, b, "OAS", "EE", ("Obj", "KE"))
    if not ee:
        return _missing(claim, "no pair of conditions without and with OAS (without OANA)")
    detail = " and from ".join(p.text() for p in ee)
    if few := _few(claim, "OAS reduces Extraneous Effort", n, f"Extraneous Effort goes from {detail}.", _quotes(ee)):
        return few
    if all(p.move < 0 for p in ee):
        return Finding(claim, f"OAS lowers Extraneous Effort from {detail}, as for every planner in the paper.", True,
                       _quotes(ee))
    return Finding(claim, f"{_not('OAS lowering Extraneous Effort in every pair')}: it goes from {detail} "
                          "(the paper: lower for every planner).", False, _quotes(ee))


def most_efficient_context(outcomes: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.2: OAS + KE is the most efficient setting (fewest simulation steps) for three of four
    planners. Checked over the four contexts without OANA; shown when OAS+KE has the fewest steps
    (alone or tied, as printed)."""
    claim = "§4.2: OAS + KE is the most efficient context"
    b, t = _pick(outcomes, backend)
    rows = t[~t["oana"].astype(bool)] if len(t) else t
    if "OAS+KE" not in set(rows.get("context", [])) or len(rows) < 2:
        return _missing(claim, "no OAS+KE beside another context without OANA")
    qs = [(r.context, quote(outcomes, "outcomes", {"backend": b, "condition": r.condition}, "steps", "{:.0f}"))
          for r in rows.itertuples()]
    qs = [(c, q) for c, q in qs if q is not None]
    low = min(q.shown_value for _, q in qs)
    best = [c for c, q in qs if q.shown_value == low]
    detail = ", ".join(f"{c} {q.text}" for c, q in qs)
    quotes = tuple(q for _, q in qs)
    if few := _few(claim, "OAS+KE is the most efficient context", n,
                   f"Mean simulation steps without OANA are {detail}.", quotes):
        return few
    if "OAS+KE" in best:
        tie = f" (tied with {', '.join(c for c in best if c != 'OAS+KE')})" if len(best) > 1 else ""
        return Finding(claim, f"OAS+KE is the most efficient context{tie}: mean simulation steps without OANA are "
                              f"{detail} (the paper: for three of four planners).", True, quotes)
    return Finding(claim, f"{_not('OAS+KE as the most efficient context')}: {' and '.join(best)} has the fewest mean "
                          f"simulation steps without OANA ({detail}).", False, quotes)


def ke_without_oas(ce: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§A.3.1: KE without OAS raises Extraneous Effort over the object-only baseline (both Llama
    planners; shared object knowledge reveals targets without showing that the partner already
    acts on them). Shown when Extraneous Effort is higher with KE alone than with Obj."""
    claim = "§A.3.1: KE without OAS raises Extraneous Effort"
    b, ce = _pick(ce, backend)
    p = channel_pair(ce, b, "KE", "Obj", "EE")
    if p is None:
        return _missing(claim, "no Obj and KE pair")
    if few := _few(claim, "KE without OAS raises Extraneous Effort", n, f"Extraneous Effort goes from {p.text()}.",
                   p.quotes[:2]):
        return few
    if p.move > 0:
        return Finding(claim, f"KE without OAS raises Extraneous Effort from {p.text()}, as for both Llama planners "
                              "in the paper.", True, p.quotes[:2])
    return Finding(claim, f"{_not('KE without OAS raising Extraneous Effort')}: it goes from {p.text()}.", False,
                   p.quotes[:2])


def _oana_pairs(ce: pd.DataFrame, b: str, metric: str, observability: str = "partial") -> list[ChannelPair]:
    pairs = _pairs(ce, b, "OANA", metric)
    return [p for p in pairs if p.off.startswith("Full:") == (observability == "full")]


def _by_context(pairs: Sequence[ChannelPair]) -> str:
    """``"Obj 80.0% → 70.0%; OAS ..."`` (each pair named by the context it turns OANA on in)."""
    return "; ".join(f"{p.off.removeprefix('Full:')} {p.arrow()}" for p in pairs)


def _oana_moves(ce: pd.DataFrame, backend: str | None, n: int | None, metric: str, name: str, sign: int,
                paper: str) -> Finding:
    """OANA moves ``metric`` (named ``name``) in direction ``sign`` in most contexts under partial
    observability (more than half); ``paper`` is the paper's count."""
    verb = "lowers" if sign < 0 else "raises"
    claim = f"§4.2: OANA {verb} {name}"
    b, ce = _pick(ce, backend)
    pairs = _oana_pairs(ce, b, metric)
    if not pairs:
        return _missing(claim, "no context without and with OANA")
    k = sum(p.move == sign for p in pairs)
    body = f"in {_k_of(k, len(pairs))} contexts ({_by_context(pairs)}; the paper: {paper})"
    if few := _few(claim, f"OANA {verb} {name}", n, f"{name} is {'lower' if sign < 0 else 'higher'} with OANA {body}.",
                   _quotes(pairs)):
        return few
    if 2 * k > len(pairs):
        return Finding(claim, f"OANA {verb} {name} {body}.", True, _quotes(pairs))
    what = f"OANA {'lowering' if sign < 0 else 'raising'} {name} in most contexts"
    return Finding(claim, f"{_not(what)}: it is {'lower' if sign < 0 else 'higher'} {body}.", False, _quotes(pairs))


def oana_lowers_success(ce: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.2: OANA lowers Success Rate in 15 of 16 model x context pairs. Checked over the four
    contexts under partial observability; shown when Success Rate is lower with OANA in most of
    them (more than half)."""
    return _oana_moves(ce, backend, n, "SR", "Success Rate", -1, "15 of 16 pairs")


def oana_effort(ce: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.2: with OANA, Extraneous Effort falls in 11 of 16 model x context pairs (so the added
    failures are not mainly duplication). Checked over the contexts under partial observability;
    shown when Extraneous Effort is lower with OANA in most of them."""
    return _oana_moves(ce, backend, n, "EE", "Extraneous Effort", -1, "11 of 16 pairs")


def completion_gap_widens(ce: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§A.3.1: the gap between Percent Complete and Success Rate widens under prediction in 15 of
    16 model x context pairs. Checked over the contexts under partial observability; shown when
    the gap is wider with OANA in most of them."""
    return _oana_moves(ce, backend, n, "PC_SR_gap", "the gap between Percent Complete and Success Rate", +1,
                       "15 of 16 pairs")


def oana_raises_mentions(ce: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.2: OANA raises the Other-Agent Mention Ratio from 10-53% to 55-100%. Checked per agent
    over the contexts under partial observability; shown when the ratio is higher with OANA in
    every context x agent pair. The sentence quotes the lowest and highest ratio without and
    with OANA."""
    claim = "§4.2: OANA raises the Other-Agent Mention Ratio"
    b, ce = _pick(ce, backend)
    pairs = [p for m in ("mention_R", "mention_H") for p in _oana_pairs(ce, b, m)]
    if not pairs:
        return _missing(claim, "no context without and with OANA")
    k = sum(p.move > 0 for p in pairs)
    offs = sorted((p.off_q for p in pairs), key=lambda q: q.value)
    ons = sorted((p.on_q for p in pairs), key=lambda q: q.value)
    rng = (f"from {offs[0].text}–{offs[-1].text} without it to {ons[0].text}–{ons[-1].text} with it "
           "(the paper: from 10–53% to 55–100%)")
    quotes = (offs[0], offs[-1], ons[0], ons[-1])
    if few := _few(claim, "OANA raises the Other-Agent Mention Ratio", n,
                   f"The Other-Agent Mention Ratio rises in {_k_of(k, len(pairs))} context x agent pairs, {rng}.", quotes):
        return few
    if k == len(pairs):
        return Finding(claim, f"OANA raises the Other-Agent Mention Ratio in all {len(pairs)} context x agent pairs, "
                              f"{rng}.", True, quotes)
    return Finding(claim, f"{_not('OANA raising the Other-Agent Mention Ratio in every pair')}: it rises in "
                          f"{_k_of(k, len(pairs))} context x agent pairs, {rng}.", False, quotes)


#: The paper's direction per channel (§4.2, §4.5): the metric it moves, the direction, the wording.
CHANNEL_CLAIMS = {"OAS": ("EE", -1, "lowers Extraneous Effort"), "KE": ("steps", -1, "lowers simulation steps"),
                  "OANA": ("SR", -1, "lowers Success Rate"), "Full": ("steps", -1, "lowers simulation steps")}


def channel_directions(dirs: pd.DataFrame, channel: str, backend: str | None = None, n: int | None = None) -> Finding:
    """The paper's direction for ``channel`` (:data:`CHANNEL_CLAIMS`: OAS lowers Extraneous Effort,
    KE and full observability lower simulation steps, OANA lowers Success Rate) over every pair of
    conditions that differs in it alone (:func:`.report.directions`). Shown when the metric moves
    the paper's way in more than half of the pairs."""
    metric, sign, verb = CHANNEL_CLAIMS[channel]
    name = "full observability" if channel == "Full" else channel
    claim = f"{name} {verb} in most pairs of conditions"
    b, _ = _pick(dirs, backend)
    w = {"backend": b, "channel": channel, "metric": metric}
    lo, hi = quote(dirs, "directions", w, "lower", "{:.0f}"), quote(dirs, "directions", w, "higher", "{:.0f}")
    if lo is None or hi is None:
        return _missing(claim, f"no pair of conditions without and with {name}")
    pairs = int(select_rows(dirs, w)["pairs"].iloc[0])
    k = int(lo.value if sign < 0 else hi.value)
    held = "the channels held fixed" if channel == "Full" else "the other channels held fixed"
    body = f"lower in {lo.text} and higher in {hi.text} of {pairs} pairs of conditions ({held})"
    verb_be = "are" if metric == "steps" else "is"
    if few := _few(claim, f"{name} {verb}", n, f"{LABELS[metric]} {verb_be} {body}.", (lo, hi)):
        return few
    if 2 * k > pairs:
        return Finding(claim, f"Turning on {name} {verb} in most pairs: {LABELS[metric]} {verb_be} {body}.", True, (lo, hi))
    return Finding(claim, f"{_not(f'that {name} {verb} in most pairs')}: {LABELS[metric]} {verb_be} {body}.", False,
                   (lo, hi))


# -- §4.3: role asymmetry ---------------------------------------------------------------------------

#: Per asymmetry of :data:`.report.ROLE_COUNTS` the paper claims: (format of its value, how the
#: value is named, the paper's reading: "most" (shown when it holds in more than half) or "all").
_ROLES = {
    "robot_first": ("{:.0f}", "the robot's mean lead {} steps", "most"),
    "human_more_extra_planning": (PTS, "mean gap {} points", "most"),
    "offloading_over_half": (PCT, "range {}", "all"),
    "robot_as_at_least": (PTS, "mean gap {} points", "most"),
    "human_mentions_more": (PTS, "mean gap {} points", "all"),
}


def role_asymmetries(counts: pd.DataFrame, asym: pd.DataFrame | None = None, backend: str | None = None,
                     n: int | None = None) -> list[Finding]:
    """§4.3, §A.3.2, one sentence per asymmetry of :data:`.report.ROLE_COUNTS` the paper claims,
    over the partial-observability conditions: the robot's first object interaction comes earlier
    (28 of 32 runs), the human has more Extra Planning (25 of 32), Task Offloading exceeds 50% (all
    32), the robot's Action Success is at least the human's (28 of 32), the human mentions the
    partner more without OANA (all 16). Who plans more cycles depends on the planner in the paper:
    no sentence (the table shows it). Shown when it holds in more than half of the conditions
    ("most") or in all ("all")."""
    b, t = _pick(counts, backend)
    out = []
    for key, (fmt, named, rule) in _ROLES.items():
        claim = f"§4.3: {key.replace('_', ' ')}"
        rows = t[t["asymmetry"] == key] if len(t) else t
        if not len(rows) or int(rows["n"].iloc[0]) == 0:
            out.append(_missing(claim, "no partial-observability condition with both agents' values"))
            continue
        r = rows.iloc[0]
        k, m = int(r["k"]), int(r["n"])
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
        detail = f"({value}; the paper: {r['paper']})"
        if few := _few(claim, what, n, f"{what} in {_k_of(k, m)} {scope} {detail}.", quotes):
            out.append(few)
            continue
        if (2 * k > m) if rule == "most" else (k == m):
            out.append(Finding(claim, f"{_cap(what)} in {_k_of(k, m)} partial-observability {scope} {detail}.", True,
                               quotes))
        else:
            want = "in most conditions" if rule == "most" else "in every condition"
            out.append(Finding(claim, f"{_not(f'that {what} {want}')}: it holds in {_k_of(k, m)} {scope} {detail}.",
                               False, quotes))
    return out


# -- §4.4: partner prediction -------------------------------------------------------------------------

def context_helps_type_more(gain: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.4: shared context (Obj -> OAS+KE, both with OANA) improves Action Type accuracy more than
    conditional principal-parameter accuracy (+14.7/+14.6 vs +4.2/+1.0 points, robot/human; union
    target, partial observability). Shown when the Action Type gain is larger for both agents."""
    claim = "§4.4: shared context helps Action Type more than its parameters"
    b, t = _pick(gain, backend)
    rows = t[(t["context"] == "OAS+KE") & (t["observability"] == "partial")] if len(t) else t
    if not len(rows):
        return _missing(claim, "no Obj+OANA and OAS+KE+OANA pair")
    cells = []
    for agent in [a for a in ("robot", "human") if a in set(rows["agent"])]:
        w = {"backend": b, "observability": "partial", "context": "OAS+KE", "agent": agent}
        ty = quote(gain, "prediction_gain", w, "d_type_acc", PTS)
        cp = quote(gain, "prediction_gain", w, "d_cond_principal", PTS)
        if ty and cp:
            cells.append((agent, ty, cp))
    if not cells:
        return _missing(claim, "no prediction accuracy in Obj+OANA or OAS+KE+OANA")
    detail = ", ".join(f"{a} {ty.text} against {cp.text} points" for a, ty, cp in cells)
    quotes = tuple(q for _, ty, cp in cells for q in (ty, cp))
    paper = "(the paper: about +15/+15 against +4/+1 points, robot/human)"
    what = "shared context raises Action Type accuracy more than principal-parameter accuracy"
    if few := _few(claim, what, n, f"From Obj+OANA to OAS+KE+OANA, Action Type accuracy against conditional "
                                   f"principal-parameter accuracy gains {detail} {paper}.", quotes):
        return few
    if all(ty.shown_value > cp.shown_value for _, ty, cp in cells):
        return Finding(claim, f"Going from Obj+OANA to OAS+KE+OANA raises Action Type accuracy more than conditional "
                              f"principal-parameter accuracy: {detail} {paper}.", True, quotes)
    return Finding(claim, f"{_not('shared context raising Action Type accuracy more than its parameters')} for both "
                          f"agents: {detail} {paper}.", False, quotes)


def combined_context_tops(pred: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.4, §A.3.3: OAS + KE gives the top Action Type accuracy for every model and agent (union
    target, partial observability). Shown when OAS+KE+OANA has the highest Action Type accuracy
    (alone or tied, as printed) for both agents."""
    claim = "§4.4: OAS + KE gives the top Action Type accuracy"
    b, t = _pick(pred, backend)
    rows = t[t["observability"] == "partial"] if len(t) else t
    if not len(rows) or "OAS+KE" not in set(rows["context"]) or rows["context"].nunique() < 2:
        return _missing(claim, "no OAS+KE+OANA beside another OANA condition")
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
    if few := _few(claim, "OAS+KE gives the top Action Type accuracy", n, f"Action Type accuracy by context, {detail}.",
                   quotes):
        return few
    if tops == len(agents):
        return Finding(claim, f"OAS+KE gives the top Action Type accuracy for both agents ({detail}), as for every "
                              "model and agent in the paper.", True, tuple(quotes))
    return Finding(claim, f"{_not('OAS+KE giving the top Action Type accuracy for both agents')}: it does for "
                          f"{tops} of {len(agents)} ({detail}).", False, tuple(quotes))


def parameter_bottleneck(means: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§A.3.3: among predictions with the right action type only 52.2% have every parameter
    right, while 84.8% of parameter-correct predictions have the right type (union target, mean
    over cells). Shown when type-given-all exceeds the conditional all-parameter accuracy."""
    claim = "§A.3.3: parameters are the bottleneck of prediction"
    b, _ = _pick(means, backend)
    w = {"backend": b, "observability": "partial"}
    ca = quote(means, "prediction_means", w, "cond_all_union", PCT)
    tga = quote(means, "prediction_means", w, "type_given_all_union", PCT)
    if ca is None or tga is None:
        return _missing(claim, "no scored prediction under partial observability")
    body = (f"{ca.text} of predictions with the right action type have every parameter right, while "
            f"{tga.text} of those with every parameter right have the right type (the paper: about 52% and 85%)")
    if few := _few(claim, "parameters are the bottleneck of prediction", n, f"{body}.", (ca, tga)):
        return few
    if tga.shown_value > ca.shown_value:
        return Finding(claim, f"Parameters are the bottleneck of prediction: {body}.", True, (ca, tga))
    return Finding(claim, f"{_not('parameters as the bottleneck of prediction')}: {body}.", False, (ca, tga))


# -- §4.5: strict target and full observability -----------------------------------------------------

def strict_lowers_type(means: pd.DataFrame, gap: pd.DataFrame | None = None, backend: str | None = None,
                       n: int | None = None) -> Finding:
    """§4.5, §A.5.1: under the strict next-action target Action Type accuracy falls (by 16.0
    points, 36.5% relative, on average). Checked under partial observability; shown when the mean
    union − strict gap is positive; the sentence counts the cells where strict is lower."""
    claim = "§4.5: the strict target lowers Action Type accuracy"
    b, t = _pick(means, backend)
    rows = t[t["observability"] == "partial"] if len(t) else t
    if not len(rows):
        return _missing(claim, "no scored prediction under partial observability")
    w = {"backend": b, "observability": "partial"}
    u = quote(means, "prediction_means", w, "type_acc_union", PCT)
    s = quote(means, "prediction_means", w, "type_acc_strict", PCT)
    g = quote(means, "prediction_means", w, "type_gap", "{:.1f}")
    rel = quote(means, "prediction_means", w, "type_rel", "{:.1%}")
    quotes = tuple(q for q in (u, s, g, rel) if q)
    if u is None or s is None or g is None:
        return _missing(claim, "no Action Type accuracy under both targets")
    k, m = int(rows["cells_lower"].iloc[0]), int(rows["cells"].iloc[0])
    body = (f"mean Action Type accuracy is {u.text} (union) against {s.text} (strict), {g.text} points"
            + (f" ({rel.text} relative)" if rel else "") + f" lower, and lower in {_k_of(k, m)} condition x agent "
            "cells (the paper: 16 points)")
    if few := _few(claim, "the strict target lowers Action Type accuracy", n, f"{body}.", quotes):
        return few
    if g.shown_value > 0:
        return Finding(claim, f"The strict next-action target lowers Action Type accuracy: {body}.", True, quotes)
    return Finding(claim, f"{_not('the strict target lowering Action Type accuracy')}: {body}.", False, quotes)


def conditionals_hold(means: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§A.5.1: the conditional all-parameter accuracy barely moves between targets (52.2% ->
    52.4%) while unconditional Action Type accuracy differs by 16 points. Shown when the mean
    conditional all-parameter accuracy moves less than Action Type accuracy (as printed)."""
    claim = "§A.5.1: conditional accuracy holds across targets"
    b, _ = _pick(means, backend)
    w = {"backend": b, "observability": "partial"}
    qs = {k: quote(means, "prediction_means", w, k, PCT) for k in
          ("cond_all_union", "cond_all_strict", "type_acc_union", "type_acc_strict")}
    if any(q is None for q in qs.values()):
        return _missing(claim, "no conditional all-parameter accuracy under both targets")
    ca = abs(qs["cond_all_union"].shown_value - qs["cond_all_strict"].shown_value)
    ty = abs(qs["type_acc_union"].shown_value - qs["type_acc_strict"].shown_value)
    body = (f"conditional all-parameter accuracy is {qs['cond_all_union'].text} (union) and "
            f"{qs['cond_all_strict'].text} (strict), Action Type accuracy {qs['type_acc_union'].text} and "
            f"{qs['type_acc_strict'].text} (the paper: about 52% under both, against a 16-point gap)")
    quotes = tuple(qs.values())
    if few := _few(claim, "the conditional accuracy holds across targets", n, f"{body}.", quotes):
        return few
    if ca < ty:
        return Finding(claim, f"The conditional accuracy moves less between targets than Action Type accuracy: {body}.",
                       True, quotes)
    return Finding(claim, f"{_not('the conditional accuracy holding across targets')}: {body}.", False, quotes)


def full_obs_shortens(fvp: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.5, §A.4.1: full observability shortens episodes by 43% at the object-only baseline (and
    50-53% with OAS). Checked without OANA; shown when Full:Obj has fewer mean steps than Obj."""
    claim = "§4.5: full observability shortens episodes"
    b, t = _pick(fvp, backend)
    rows = t[~t["oana"].astype(bool)] if len(t) else t
    if not len(rows) or "Obj" not in set(rows["context"]):
        return _missing(claim, "no Obj and Full:Obj pair")
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
        return _missing(claim, "no steps for Obj and Full:Obj")
    detail = "; ".join(parts) + " (the paper: 43% at the baseline, 50–53% with OAS)"
    if few := _few(claim, "full observability shortens episodes", n, f"Partial → full observability: {detail}.",
                   tuple(quotes)):
        return few
    if base[1].shown_value < base[0].shown_value:
        return Finding(claim, f"Full observability shortens episodes: {detail}.", True, tuple(quotes))
    return Finding(claim, f"{_not('full observability shortening episodes')}: {detail}.", False, tuple(quotes))


def effort_remains(fvp: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.5: most Extraneous Effort remains under full observability (about 94% for Llama 8B and
    86% for Llama 70B at the object-only baseline). Shown when Full:Obj keeps more than half of
    Obj's Extraneous Effort (worded "does not fall" when it keeps all of it or more)."""
    claim = "§4.5: most Extraneous Effort remains under full observability"
    b, _ = _pick(fvp, backend)
    w = {"backend": b, "context": "Obj", "oana": False}
    p, f = quote(fvp, "full_vs_partial", w, "EE_partial", PCT), quote(fvp, "full_vs_partial", w, "EE_full", PCT)
    kept = quote(fvp, "full_vs_partial", w, "EE_retained", "{:.0%}")
    if p is None or f is None or kept is None:
        return _missing(claim, "no Extraneous Effort for Obj and Full:Obj")
    body = (f"Extraneous Effort is {p.text} with Obj and {f.text} with Full:Obj, {kept.text} of the partial "
            "level (the paper: about 94% and 86% for the two Llama planners)")
    if few := _few(claim, "most Extraneous Effort remains under full observability", n, f"{body}.", (p, f, kept)):
        return few
    if kept.shown_value >= 1:
        return Finding(claim, f"Extraneous Effort does not fall under full observability: {body}.", True, (p, f, kept))
    if kept.shown_value > 0.5:
        return Finding(claim, f"Most Extraneous Effort remains under full observability: {body}.", True, (p, f, kept))
    return Finding(claim, f"{_not('most Extraneous Effort remaining under full observability')}: {body}.", False,
                   (p, f, kept))


def oana_under_full_obs(ce: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.5, §A.4.1: with full observability, OANA lowers Success Rate and Percent Complete in all
    four configurations. Shown when both are lower with OANA in every full-observability context."""
    claim = "§4.5: OANA lowers success under full observability"
    b, ce = _pick(ce, backend)
    sr, pc = _oana_pairs(ce, b, "SR", "full"), _oana_pairs(ce, b, "PC", "full")
    if not sr:
        return _missing(claim, "no full-observability context without and with OANA")
    detail = "; ".join(f"{s.off.removeprefix('Full:')}: {s.arrow()} and {p.arrow()}" for s, p in zip(sr, pc))
    quotes = _quotes(sr) + _quotes(pc)
    what = "OANA lowers Success Rate and Percent Complete under full observability"
    if few := _few(claim, what, n, f"With OANA under full observability, Success Rate and Percent Complete go "
                                   f"{detail}.", quotes):
        return few
    if all(p.move < 0 for p in (*sr, *pc)):
        return Finding(claim, f"Under full observability OANA lowers Success Rate and Percent Complete in every context "
                              f"({detail}), as in all four configurations of the paper.", True, quotes)
    return Finding(claim, f"{_not('OANA lowering both Success Rate and Percent Complete under full observability')}: "
                          f"{detail}.", False, quotes)


def oas_under_full_obs(ce: pd.DataFrame, backend: str | None = None, n: int | None = None) -> Finding:
    """§4.5, §A.4.1: under full observability OAS no longer improves task quality (Success Rate,
    Percent Complete), though it still reduces Extraneous Effort. Checked without OANA; shown when
    neither Success Rate nor Percent Complete is higher with OAS."""
    claim = "§4.5: OAS no longer improves task quality under full observability"
    b, ce = _pick(ce, backend)
    sr, pc, ee = (channel_pair(ce, b, "OAS", "Full:Obj", m) for m in ("SR", "PC", "EE"))
    if sr is None or pc is None:
        return _missing(claim, "no Full:Obj and Full:OAS pair")
    detail = f"Success Rate {sr.arrow()}, Percent Complete {pc.arrow()}"
    if ee is not None:
        detail += f", Extraneous Effort {ee.arrow()}"
    quotes = sr.quotes[:2] + pc.quotes[:2] + (ee.quotes[:2] if ee else ())
    if few := _few(claim, "OAS stops improving task quality under full observability", n,
                   f"From Full:Obj to Full:OAS: {detail}.", quotes):
        return few
    if sr.move <= 0 and pc.move <= 0:
        return Finding(claim, f"Under full observability OAS no longer improves task quality (Full:Obj → Full:OAS: "
                              f"{detail}), as in the paper.", True, quotes)
    return Finding(claim, f"{_not('OAS ceasing to improve task quality under full observability')} (Full:Obj → "
                          f"Full:OAS: {detail}).", False, quotes)


# -- the analysis tail (beyond the paper) ---------------------------------------------------------------

#: The paired contrasts the tail and the headline read: (channel, on, off, outcome, the paper's
#: sign, how the outcome is printed, the claim as a phrase, the paper's size).
TESTED = (("KE", "KE", "Obj", "simulation_steps", -1, "{:+.0f}", "KE shortens episodes", "up to 25% fewer steps"),
          ("OAS", "OAS", "Obj", "extraneous_effort", -1, "{:+.1%}", "OAS reduces Extraneous Effort",
           "lower for every planner"),
          ("OANA", "Obj+OANA", "Obj", "success", -1, "{:+.1%}", "OANA lowers success",
           "lower in 15 of 16 pairs"),
          ("Full", "Full:Obj", "Obj", "simulation_steps", -1, "{:+.0f}", "full observability shortens episodes",
           "43% fewer steps"))
_UNITS = {"simulation_steps": "simulation steps", "extraneous_effort": "in Extraneous Effort",
          "success": "in Success Rate", "percent_complete": "in Percent Complete"}


def _points(q: Quote | None) -> Quote | None:
    """A difference of two rates in percentage points (``-7.6 pp``, not ``-7.6%``)."""
    return replace(q, text=q.text.replace("%", " pp")) if q is not None and q.text.endswith("%") else q


def paired_effect(tests: pd.DataFrame, channel: str, on: str, off: str, outcome: str, paper_sign: int, fmt: str,
                  what: str, paper: str, backend: str | None = None) -> Finding:
    """Beyond the paper (one run per configuration there): one channel effect of the analysis
    tail, ``on`` − ``off`` paired by task, its mean difference and 95% paired-bootstrap CI
    (``channel_tests``, sign-flip rows). ``shown`` by :func:`~collablab.analysis.findings.verdict`
    on the interval with the paper's sign and at least :data:`MIN_EPISODES` tasks."""
    claim = f"{what} (paired by task)"
    b, _ = _pick(tests, backend)
    w = {"backend": b, "channel": channel, "on": on, "off": off, "outcome": outcome, "test": "sign_flip"}
    est, lo, hi = (_points(quote(tests, "channel_tests", w, c, fmt)) for c in ("estimate", "ci_low", "ci_high"))
    if est is None:
        return _missing(claim, f"no paired test of {on} against {off}")
    k = int(select_rows(tests, w)["n"].iloc[0])
    ci = f" [95% CI {lo.text}, {hi.text}]" if lo and hi else ""
    body = f"{on} − {off} is {est.text}{ci} {_UNITS[outcome]}, paired over {k} tasks (the paper: {paper})"
    quotes = tuple(q for q in (est, lo, hi) if q)
    shown = verdict(lo.value if lo else None, hi.value if hi else None, paper_sign, n=k, min_n=MIN_EPISODES)
    if shown is True:
        return Finding(claim, f"{_cap(what)}: {body}.", True, quotes)
    if shown is False:
        return Finding(claim, f"{_not(f'that {what}')}: {body}.", False, quotes)
    if k < MIN_EPISODES:
        return Finding(claim, f"{_cap(body)}. Too few tasks to tell whether {what} ({MIN_EPISODES} needed).", None,
                       quotes)
    return Finding(claim, f"This run cannot tell whether {what}: {body}.", None, quotes)
