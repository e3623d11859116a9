"""Sentences about a run's results, written from its result tables (MECoBench §4-6).

Every function here takes result tables (long DataFrames from :mod:`.tables`, each with a
``backend`` column) and returns a :class:`Finding`: sentences whose wording depends on the
numbers, the numbers they quote (each a :class:`Quote` naming the table cell it came from) and
whether the run shows the paper's effect (``shown``: True, False, or None: too few units to tell).
The backend is named once, in the notebook's headline (:meth:`Report.headline`), never in a finding.

When ``shown`` is what (issue 24; each function's docstring names its rule):

- a claim that one SR is above another rests on the 95% interval of the difference (Newcombe's,
  from the two cells' Wilson intervals ``SR_low``/``SR_high``: :func:`.tables.rate_difference`)
  and :func:`~collablab.analysis.findings.verdict`: on the paper's side of 0 it is shown, on the
  other side it is not, holding 0 it is too few units to tell (also when a cell has fewer than
  :data:`MIN_UNITS` cases); a claim over several team sizes combines them (:func:`_combine`);
- a claim on AUC rests on the same difference interval, from the cells' 95% t intervals
  (``AUC_low``/``AUC_high``, :func:`.tables.mean_interval`);
- a claim resting on a point comparison (slopes, HFR, shares of episodes, relative gains) is
  read from the numbers as printed, and is too few units to tell when a cell it compares has fewer
  than :data:`MIN_UNITS` cases (``cases``, ``episodes`` or ``#Case``).

Every sentence is short (one finding per sentence, at most 300 characters): the numbers first,
then what they show. A :class:`Report` gathers a notebook's tables and findings by section.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from ...analysis.findings import Finding, Quote, Report, backend_of, quote, select_rows, verdict
from .tables import rate_difference, wilson

#: Prior variants without location information, and with noisy locations (tasks.PRIOR_FIELDS).
NO_LOCATION = ("no_location", "none")
NOISY = ("noisy", "noisy_no_appearance")
#: A cell with fewer cases than this is too few units to tell (:func:`verdict`'s ``min_n``).
MIN_UNITS = 10
_COUNTS = ("cases", "episodes", "#Case")
#: How sentences print each column: rates (SR, CR, HFR and shares) as whole percentages, as the
#: tables show them (issue 24); the rest with two decimals unless a finding names its format.
RATE_FORMAT = "{:.0%}"
#: SR slopes per object (:func:`.tables.objects_trends`: percentage points).
_SLOPE = "{:+.1f} pp"
_FORMATS = {c: RATE_FORMAT for c in ("SR", "SR_low", "SR_high", "CR", "CR_low", "CR_high", "HFR", "SR 1 agent",
                                     "SR 2 agents", "SR with", "SR without", "rate")}


def _q(t: pd.DataFrame | None, table: str, where: Mapping[str, Any], column: str, fmt: str | None = None) -> Quote | None:
    """:func:`quote` with the column's format (:data:`_FORMATS`) unless ``fmt`` is given."""
    return quote(t, table, where, column, fmt or _FORMATS.get(column, "{:.2f}"))


# -- helpers -----------------------------------------------------------------------------------------
def _v(q: Quote) -> float:
    return q.shown_value


def _agents(n: Any) -> str:
    return f"{int(n)} agent" + ("" if int(n) == 1 else "s")


def _join(parts: Sequence[str]) -> str:
    parts = list(parts)
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _cond(where: Mapping[str, Any]) -> str:
    """"with broadcast on parallel tasks (full priors)" from a row selector."""
    bits = []
    if "protocol" in where:
        bits.append(f"with {where['protocol']}")
    if "structure" in where:
        bits.append(f"on {where['structure']} tasks")
    out = " ".join(bits)
    if "prior" in where:
        out += f" ({_prior(where['prior'])})"
    return out.strip()


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _missing(what: str, claim: str) -> Finding:
    return Finding(claim, f"Not checked ({claim}): this run has {what}.", None)


def _ending(shown: bool | None, yes: str, no: str, unsure: str, ref: str) -> str:
    """The verdict sentence: "<yes>, as in the paper (ref)." / "This run does not show <no> (ref)." /
    "The intervals overlap: too few units to tell whether <unsure> (ref).\""""
    if shown:
        return f"{_cap(yes)}, as in the paper ({ref})."
    if shown is False:
        return f"This run does not show {no} ({ref})."
    return f"Too few units to tell whether {unsure} ({ref})."


#: How the sentences name the prior variants (tasks.PRIOR_FIELDS).
PRIOR_LABELS = {"full": "full priors", "no_appearance": "no-appearance priors", "no_location": "no-location priors",
                "none": "no priors", "noisy": "noisy priors", "noisy_no_appearance": "noisy no-appearance priors"}


def _prior(p: Any) -> str:
    return PRIOR_LABELS.get(str(p), f"{p} priors")


def _sizes(t: pd.DataFrame, where: Mapping[str, Any], x: str = "n_agents") -> list[int]:
    return sorted(int(n) for n in select_rows(t, where)[x].dropna().unique())


def cases_of(t: pd.DataFrame, where: Mapping[str, Any]) -> int | None:
    """The cases of the one row ``where`` selects (None without a count column or row)."""
    col = next((c for c in _COUNTS if c in t.columns), None)
    rows = select_rows(t, where) if col else t.iloc[0:0]
    return int(rows[col].iloc[0]) if col and len(rows) == 1 and not pd.isna(rows[col].iloc[0]) else None


def _few(t: pd.DataFrame, wheres: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a row of ``wheres`` has fewer than :data:`MIN_UNITS` cases (the point-comparison rule)."""
    return any((n := cases_of(t, w)) is not None and n < MIN_UNITS for w in wheres)


def rate_cell(t: pd.DataFrame, where: Mapping[str, Any], col: str = "SR") -> tuple[float, float, float] | None:
    """(value, 95% low, high) of ``col`` in the one row ``where`` selects: its ``<col>_low``/``<col>_high``
    cells, else (a rate) the Wilson interval from its cases; None without either."""
    rows = select_rows(t, where)
    if len(rows) != 1 or pd.isna(rows[col].iloc[0]):
        return None
    p = float(rows[col].iloc[0])
    if f"{col}_low" in rows.columns and not pd.isna(rows[f"{col}_low"].iloc[0]):
        return p, float(rows[f"{col}_low"].iloc[0]), float(rows[f"{col}_high"].iloc[0])
    n = cases_of(t, where)
    return None if not n or _FORMATS.get(col) != RATE_FORMAT else (p, *wilson(p * n, n))


def _diff_verdict(t: pd.DataFrame, wa: Mapping[str, Any], wb: Mapping[str, Any], sign: int = 1,
                  col: str = "SR") -> bool | None:
    """:func:`verdict` of ``col`` at ``wa`` minus ``col`` at ``wb`` (Newcombe's 95% interval), the
    paper's sign ``sign``; None when a cell has fewer than :data:`MIN_UNITS` cases or no interval."""
    a, b = rate_cell(t, wa, col), rate_cell(t, wb, col)
    if a is None or b is None:
        return None
    _, low, high = rate_difference(a, b)
    counts = [n for n in (cases_of(t, wa), cases_of(t, wb)) if n is not None]
    return verdict(low, high, sign, n=min(counts) if counts else None, min_n=MIN_UNITS)


def _combine(verdicts: Sequence[bool | None]) -> bool | None:
    """Several cells' verdicts as one: not shown when one cell goes against the paper, shown when
    every cell shows it, else too few units to tell."""
    if any(v is False for v in verdicts):
        return False
    return True if verdicts and all(verdicts) else None


def _point(holds: bool, few: bool) -> bool | None:
    """The point-comparison rule: too few units to tell when a cell is small, else whether it holds."""
    return None if few else holds


def _iv(t: pd.DataFrame, table: str, where: Mapping[str, Any], col: str = "SR") -> tuple[str, list[Quote]]:
    """"62% [51%, 72%]" of the cell (the estimate alone without interval columns) and its quotes."""
    q = _q(t, table, where, col)
    if q is None:
        return "", []
    lo, hi = _q(t, table, where, f"{col}_low"), _q(t, table, where, f"{col}_high")
    if lo is None or hi is None:
        return q.text, [q]
    return f"{q.text} [{lo.text}, {hi.text}]", [q, lo, hi]


# -- §4: does collaboration help? --------------------------------------------------------------------
def second_agent_gain(t8: pd.DataFrame, structure: str = "parallel") -> Finding:
    """Does a second agent raise SR?

    Paper (§4.1, Fig. 6, Table 8): on parallel tasks most models benefit from a second agent (SR
    rises from 1 to 2 agents under the same 60-step budget). Table: :func:`.tables.table8`
    (``structure``, ``n_agents``, ``cases``, ``SR`` with its Wilson interval). Rule: the interval of
    SR(2) - SR(1) (:func:`_diff_verdict`). Without both team sizes: cannot check.
    """
    claim = "§4.1, Fig. 6, Table 8: a second agent raises SR on parallel tasks"
    w1, w2 = {"structure": structure, "n_agents": 1}, {"structure": structure, "n_agents": 2}
    (t1, q1), (t2, q2) = _iv(t8, "table8", w1), _iv(t8, "table8", w2)
    if not q1 or not q2:
        return _missing(f"no 1- and 2-agent broadcast episodes on {structure} tasks", claim)
    shown = _diff_verdict(t8, w2, w1)
    text = (f"On {structure} tasks with broadcast, SR is {t1} with 1 agent and {t2} with 2 agents. "
            + _ending(shown, "a second agent raises SR", "the paper's gain from a second agent",
                      "a second agent raises SR", "Fig. 6, Table 8"))
    return Finding(claim, text, shown, (*q1, *q2))


def _series(t: pd.DataFrame, table: str, where: Mapping[str, Any], metric: str) -> list[tuple[int, Quote]]:
    return [(n, q) for n in _sizes(t, where) if (q := _q(t, table, {**where, "n_agents": n}, metric)) is not None]


def inverted_u(t: pd.DataFrame, where: Mapping[str, Any], metric: str = "SR", table: str = "scaling",
               figure: str = "Table 9, Fig. 7a") -> Finding:
    """Does ``metric`` rise and then fall as the team grows (an inverted U)?

    Paper (§4.2, Table 9, Fig. 7a; without location priors Figs. 13a, 34, Table 15): under a fixed
    total budget, performance first improves with more agents, then saturates and degrades.
    Table: :func:`.tables.scaling_table` rows selected by ``where``, one per team size. Rule: the
    peak (highest printed value) must lie strictly inside the sweep; shown when the intervals of
    peak minus smallest team and peak minus largest team are both above 0; not shown when the peak
    is at an end of the sweep (or every size is equal) and every cell has :data:`MIN_UNITS` cases;
    otherwise too few units to tell. Fewer than three team sizes: cannot check.
    """
    claim = f"§4.2, {figure}: {metric} follows an inverted U over team sizes"
    qs = _series(t, table, where, metric)
    if len(qs) < 3:
        return _missing(f"fewer than three team sizes {_cond(where)}", claim)
    ns, vals = [n for n, _ in qs], [_v(q) for _, q in qs]
    peak = vals.index(max(vals))
    listing = _join([f"{q.text} ({_agents(n)})" for n, q in qs])
    head = f"{_cap(_cond(where))}, {metric} by team size is {listing}."
    inside = 0 < peak < len(vals) - 1 and vals[peak] > vals[0] and vals[peak] > vals[-1]
    wp, w0, w1 = ({**where, "n_agents": ns[k]} for k in (peak, 0, -1))
    if inside:
        shown = _combine([_diff_verdict(t, wp, w0, col=metric), _diff_verdict(t, wp, w1, col=metric)])
        shown = True if shown else None  # the peak is inside: never evidence against the paper
    else:
        shown = _point(False, _few(t, [{**where, "n_agents": n} for n in ns]))
    top = [n for n, v in zip(ns, vals) if v == max(vals)]
    where_top = "the same at every team size" if len(top) == len(ns) else f"highest with {_join([str(n) for n in top])}"
    text = head + " " + _ending(shown, f"it peaks at {_agents(ns[peak])} and falls after it, an inverted U",
                                f"the paper's inverted U: {metric} is {where_top}" + (" agents" if len(top) < len(ns) else ""),
                                f"the rise to {_agents(ns[peak])} and the fall after it are an inverted U", figure)
    return Finding(claim, text, shown, tuple(q for _, q in qs))


def _pairs(t: pd.DataFrame, table: str, where: Mapping[str, Any], col: str, a: str, b: str, x: str,
           metric: str = "SR") -> list[tuple[int, Quote, Quote]]:
    out = []
    for n in _sizes(t, where, x):
        qa = _q(t, table, {**where, col: a, x: n}, metric)
        qb = _q(t, table, {**where, col: b, x: n}, metric)
        if qa is not None and qb is not None:
            out.append((n, qa, qb))
    return out


def _pair_verdicts(t: pd.DataFrame, where: Mapping[str, Any], col: str, a: str, b: str,
                   pairs: Sequence[tuple[int, Quote, Quote]], sign: int = 1) -> list[bool | None]:
    return [_diff_verdict(t, {**where, col: a, "n_agents": n}, {**where, col: b, "n_agents": n}, sign)
            for n, _, _ in pairs]


def communication_helps(t: pd.DataFrame, where: Mapping[str, Any], table: str = "scaling") -> Finding:
    """Do agents that talk (broadcast) beat agents that cannot (isolated) at every team size?

    Paper (§5.2, Fig. 9, Table 9): disabling communication consistently degrades performance,
    at every team size from 2 to 5. Table: :func:`.tables.scaling_table` (``protocol`` broadcast
    and isolated, team sizes >= 2) within ``where`` (structure, prior). Rule: the interval of
    SR(broadcast) - SR(isolated) at each team size, combined (:func:`_combine`). No team size with
    both protocols: cannot check.
    """
    claim = "§5.2, Fig. 9, Table 9: removing communication lowers SR at every team size"
    pairs = [p for p in _pairs(t, table, where, "protocol", "broadcast", "isolated", "n_agents") if p[0] >= 2]
    if not pairs:
        return _missing(f"no team of 2 or more agents with both broadcast and isolated {_cond(where)}", claim)
    shown = _combine(_pair_verdicts(t, where, "protocol", "broadcast", "isolated", pairs))
    listing = _join([f"{qa.text} vs {qb.text} ({_agents(n)})" for n, qa, qb in pairs])
    behind = [n for n, qa, qb in pairs if not _v(qa) > _v(qb)]
    where_txt = _cond({k: v for k, v in where.items() if k != "protocol"})
    no = ("the paper's consistent cost of removing communication" +
          (f": broadcast is not ahead with {_join([str(n) for n in behind])} agents" if behind else ""))
    text = (f"{_cap(where_txt)}, SR with broadcast vs isolated agents is {listing}. "
            + _ending(shown, "broadcast beats isolated agents at every team size", no,
                      "broadcast beats isolated agents at every team size", "Fig. 9b, Table 9"))
    return Finding(claim, text, shown, tuple(q for _, qa, qb in pairs for q in (qa, qb)))


def communication_gap_widens(t: pd.DataFrame, where: Mapping[str, Any], table: str = "scaling") -> Finding:
    """Does broadcast's SR lead over isolated agents grow with the team?

    Paper (§5.2, Fig. 9b): when the number of agents grows, the gap between communication and no
    communication widens (communication ahead throughout). Table: :func:`.tables.scaling_table`
    within ``where``. The sentence quotes the gaps' ends only (:func:`communication_helps` lists
    every size). Rule (point comparison of printed values): shown when broadcast is ahead at the
    smallest team of 2 or more and further ahead at the largest; when broadcast is not ahead at the
    smallest team, there is no gap to widen (not shown; a sign change is not a widening gap); too
    few units to tell when a cell has fewer than :data:`MIN_UNITS` cases. Fewer than two team sizes
    with both protocols: cannot check.
    """
    claim = "§5.2, Fig. 9b: the broadcast-isolated gap widens as teams grow"
    pairs = [p for p in _pairs(t, table, where, "protocol", "broadcast", "isolated", "n_agents") if p[0] >= 2]
    if len(pairs) < 2:
        return _missing(f"fewer than two team sizes of 2 or more with both broadcast and isolated {_cond(where)}", claim)
    (n0, a0, b0), (n1, a1, b1) = pairs[0], pairs[-1]
    g0, g1 = round(_v(a0) - _v(b0), 2), round(_v(a1) - _v(b1), 2)
    few = _few(t, [{**where, "protocol": p, "n_agents": n} for n in (n0, n1) for p in ("broadcast", "isolated")])
    shown = _point(g0 > 0 and g1 > g0, few)
    lead_txt = "ahead" if g0 > 0 else "level" if g0 == 0 else "behind"
    head = (f"Broadcast is {lead_txt} of isolated agents with {_agents(n0)} ({a0.text} vs {b0.text}) "
            f"and at {a1.text} vs {b1.text} with {_agents(n1)}.")
    no = ("the paper's widening gap: broadcast has no lead to widen at the smallest team" if g0 <= 0 else
          "the paper's widening gap: the lead does not grow with the team")
    text = head + " " + _ending(shown, "the lead grows with the team", no, "the lead grows with the team", "Fig. 9b")
    return Finding(claim, text, shown, (a0, b0, a1, b1))


def communication_by_structure(t11: pd.DataFrame) -> Finding:
    """Is the cost of removing communication larger on sequential than on parallel tasks?

    Paper (§5.2, Fig. 9a, Table 11): without communication performance drops on both structures,
    with a much larger drop on sequential tasks (zones and handovers). Table:
    :func:`.tables.table11` (2 agents, broadcast vs isolated per structure). Rule: the interval of
    SR(broadcast) - SR(isolated) on sequential tasks (:func:`_diff_verdict`), and the printed drop
    must be larger than on parallel tasks (else not shown, with enough cases). A structure missing:
    cannot check.
    """
    claim = "§5.2, Fig. 9a, Table 11: removing communication costs more on sequential tasks"
    w = {(s, p): {"structure": s, "protocol": p} for s in ("parallel", "sequential") for p in ("broadcast", "isolated")}
    q = {k: _q(t11, "table11", v, "SR") for k, v in w.items()}
    if any(v is None for v in q.values()):
        return _missing("2-agent broadcast and isolated teams on only one structure, or on none", claim)
    dp = round(_v(q["parallel", "broadcast"]) - _v(q["parallel", "isolated"]), 2)
    ds = round(_v(q["sequential", "broadcast"]) - _v(q["sequential", "isolated"]), 2)
    v_seq = _diff_verdict(t11, w["sequential", "broadcast"], w["sequential", "isolated"])
    shown = v_seq if v_seq is not True else _point(ds > dp, _few(t11, list(w.values())))
    text = (f"With 2 agents, SR with broadcast vs isolated is {q['sequential', 'broadcast'].text} vs "
            f"{q['sequential', 'isolated'].text} on sequential tasks and {q['parallel', 'broadcast'].text} vs "
            f"{q['parallel', 'isolated'].text} on parallel tasks. "
            + _ending(shown, "removing communication costs more on sequential tasks",
                      "the paper's larger drop on sequential tasks", "removing communication costs more on sequential tasks",
                      "Fig. 9a, Table 11"))
    return Finding(claim, text, shown, tuple(q.values()))


def handover_failures_without_communication(t11: pd.DataFrame) -> Finding:
    """Do handovers fail more often without communication (sequential tasks)?

    Paper (App. D.2, Table 11): in sequential tasks agents without communication fail to
    coordinate cross-zone handovers, so HFR rises substantially. Table: :func:`.tables.table11`
    (sequential rows, ``HFR``; NaN when no handover was attempted). Rule (point comparison): shown
    when isolated HFR is above broadcast HFR; too few units to tell under :data:`MIN_UNITS` cases. A
    missing HFR (no handover attempted, "NA" in Table 11): cannot check.
    """
    claim = "App. D.2, Table 11: HFR rises without communication on sequential tasks"
    wb, wi = {"structure": "sequential", "protocol": "broadcast"}, {"structure": "sequential", "protocol": "isolated"}
    qb, qi = _q(t11, "table11", wb, "HFR"), _q(t11, "table11", wi, "HFR")
    if qb is None or qi is None:
        return _missing("no handover attempt by a 2-agent broadcast or isolated team on sequential tasks (HFR is NA)", claim)
    shown = _point(_v(qi) > _v(qb), _few(t11, [wb, wi]))
    text = (f"On sequential tasks with 2 agents, HFR is {qi.text} isolated vs {qb.text} with broadcast. "
            + _ending(shown, "handovers fail more often without communication", "the paper's rise in HFR without communication",
                      "handovers fail more often without communication", "Table 11"))
    return Finding(claim, text, shown, (qi, qb))


def objects_decline(trends: pd.DataFrame, where: Mapping[str, Any], table: str = "trends",
                    figure: str = "Fig. 7b, Fig. 36") -> Finding:
    """Does SR fall as tasks have more objects?

    Paper (§4.2, Fig. 7b; App. D.6, Fig. 36 for parallel, sequential and no-location tasks): SR
    declines with the number of target objects. Table: :func:`.tables.objects_trends` (slope of
    SR per object, per team size, and the cases it rests on) within ``where``. Rule (point
    comparison): shown when every team size's printed slope is negative; too few units to tell when
    a line rests on fewer than :data:`MIN_UNITS` cases. No slope (one object count): cannot check.
    """
    claim = f"§4.2, App. D.6, {figure}: SR declines with the number of objects"
    qs = [(n, q) for n in _sizes(trends, where)
          if (q := _q(trends, table, {**where, "n_agents": n}, "slope", _SLOPE)) is not None]
    if not qs:
        return _missing(f"no trend line over two or more object counts {_cond(where)}", claim)
    listing = _join([f"{q.text} ({_agents(n)})" for n, q in qs])
    flat = [n for n, q in qs if not _v(q) < 0]
    shown = _point(not flat, _few(trends, [{**where, "n_agents": n} for n, _ in qs]))
    text = (f"{_cap(_cond(where))}, SR changes by {listing} per extra object (fitted slopes). "
            + _ending(shown, "SR falls as tasks have more objects",
                      f"the paper's decline for {_join([_agents(n) for n in flat])}" if flat else "the paper's decline",
                      "SR falls as tasks have more objects", figure))
    return Finding(claim, text, shown, tuple(q for _, q in qs))


def objects_robust(trends: pd.DataFrame, where: Mapping[str, Any], table: str = "trends",
                   figure: str = "Fig. 7b") -> Finding:
    """Do larger teams hold up better on tasks with many objects (a flatter SR slope)?

    Paper (§4.2, Fig. 7b, Table 10; without location priors Fig. 34b): multi-agent teams keep a
    more robust SR on complex tasks, i.e. their SR-vs-objects line is flatter than one agent's.
    Table: :func:`.tables.objects_trends` within ``where``. The sentence names the team sizes that
    are or are not flatter (:func:`objects_decline` lists the slopes). Rule (point comparison):
    shown when every multi-agent slope is above the 1-agent slope; too few units to tell under
    :data:`MIN_UNITS` cases per line. No 1-agent or no multi-agent slope: cannot check.
    """
    claim = f"§4.2, {figure}: multi-agent teams decline less with more objects"
    q1 = _q(trends, table, {**where, "n_agents": 1}, "slope", _SLOPE)
    qs = [(n, q) for n in _sizes(trends, where)
          if n > 1 and (q := _q(trends, table, {**where, "n_agents": n}, "slope", _SLOPE))]
    if q1 is None or not qs:
        return _missing(f"no 1-agent and multi-agent trend lines {_cond(where)}", claim)
    steeper = [n for n, q in qs if not _v(q) > _v(q1)]
    flatter = [n for n, q in qs if _v(q) > _v(q1)]
    shown = _point(not steeper, _few(trends, [{**where, "n_agents": n} for n in (1, *[n for n, _ in qs])]))
    if flatter:
        head = (f"Against the lone agent's slope of {q1.text}, the SR line is flatter with {_join([str(n) for n in flatter])} "
                f"agents" + (f" and not with {_join([str(n) for n in steeper])}." if steeper else "."))
    else:
        head = f"Against the lone agent's slope of {q1.text}, no larger team has a flatter SR line."
    text = head + " " + _ending(shown, "larger teams hold up better on tasks with more objects",
                                "the paper's more robust larger teams", "larger teams hold up better", figure)
    return Finding(claim, text, shown, (q1,))


# -- §5: which mode works? ---------------------------------------------------------------------------
def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


def protocol_ranking(t: pd.DataFrame, structure: str, table: str = "modes") -> Finding:
    """Which protocol has the highest SR with two agents, and do isolated agents rank last?

    Paper (§5.1, Fig. 8a, Table 12): leader-based collaboration achieves the best overall
    performance for most models; (§5.2, Fig. 9a, Table 12) without communication performance is
    the lowest. Table: :func:`.tables.modes_table` rows of ``structure`` (one per protocol). Rule:
    the leader part is the interval of SR(leader) minus the best other protocol's SR; the isolated
    part the interval of SR(isolated) minus the lowest other protocol's SR (paper's sign -1);
    combined (:func:`_combine`). Without leader or isolated rows, that part is left out; without
    either: cannot check.
    """
    claim = "§5.1, §5.2, Figs. 8a, 9a, Table 12: the leader ranks first and isolated agents last (2 agents)"
    protos = list(select_rows(t, {"structure": structure})["protocol"])
    qs = {p: q for p in protos if (q := _q(t, table, {"structure": structure, "protocol": p}, "SR")) is not None}
    if len(qs) < 2 or not ({"leader", "isolated"} & set(qs)):
        return _missing(f"fewer than two protocols, or neither leader nor isolated, on {structure} tasks", claim)
    order = sorted(qs, key=lambda p: -_v(qs[p]))
    rank = {p: 1 + sum(_v(qs[o]) > _v(qs[p]) for o in qs) for p in qs}
    w = {p: {"structure": structure, "protocol": p} for p in qs}
    text = f"On {structure} tasks with 2 agents, SR by protocol is {', '.join(f'{p} {qs[p].text}' for p in order)}."
    parts: list[bool | None] = []
    if "leader" in qs:
        best_other = max((p for p in qs if p != "leader"), key=lambda p: _v(qs[p]))
        v = _diff_verdict(t, w["leader"], w[best_other])
        parts.append(v)
        text += " " + _ending(v, "the leader ranks first", f"the paper's leader ranking first: it ranks {_ordinal(rank['leader'])}",
                              f"the leader ({_ordinal(rank['leader'])}) is ahead of {best_other}", "Fig. 8a")
    if "isolated" in qs:
        low_other = min((p for p in qs if p != "isolated"), key=lambda p: _v(qs[p]))
        v = _diff_verdict(t, w["isolated"], w[low_other], sign=-1)
        parts.append(v)
        text += " " + _ending(v, "isolated agents rank last", "the paper's isolated agents ranking last",
                              f"isolated agents are below {low_other}", "Fig. 9a, Table 12")
    return Finding(claim, text, _combine(parts), tuple(qs[p] for p in order))


def leader_scaling(t: pd.DataFrame, where: Mapping[str, Any], table: str = "scaling") -> Finding:
    """Does the leader's edge over broadcast shrink as the team grows?

    Paper (§5.1, Fig. 8b): centralized (leader) coordination is effective in small teams but
    saturates as team size increases, while decentralized broadcast becomes more competitive.
    Table: :func:`.tables.scaling_table` (``protocol`` leader and broadcast) within ``where``. Rule
    (point comparison of printed SR): shown when the leader beats broadcast in the smallest team
    and its lead is smaller at the largest team; too few units to tell under :data:`MIN_UNITS`
    cases. Fewer than two team sizes with both: cannot check.
    """
    claim = "§5.1, Fig. 8b: the leader's advantage over broadcast shrinks as teams grow"
    pairs = _pairs(t, table, where, "protocol", "leader", "broadcast", "n_agents")
    if len(pairs) < 2:
        return _missing(f"fewer than two team sizes with both leader and broadcast {_cond(where)}", claim)
    (n0, l0, b0), (n1, l1, b1) = pairs[0], pairs[-1]
    g0, g1 = round(_v(l0) - _v(b0), 2), round(_v(l1) - _v(b1), 2)
    few = _few(t, [{**where, "protocol": p, "n_agents": n} for n in (n0, n1) for p in ("leader", "broadcast")])
    shown = _point(g0 > 0 and g1 < g0, few)
    where_txt = _cap(_cond({k: v for k, v in where.items() if k != "protocol"}))
    no = ("the paper's leader that helps small teams: it does not beat broadcast with "
          f"{_agents(n0)}" if g0 <= 0 else "the paper's saturating leader: its lead does not shrink as the team grows")
    text = (f"{where_txt}, SR with a leader vs broadcast is {l0.text} vs {b0.text} with {_agents(n0)} and "
            f"{l1.text} vs {b1.text} with {_agents(n1)}. "
            + _ending(shown, "the leader's edge over broadcast shrinks as the team grows", no,
                      "the leader's edge shrinks as the team grows", "Fig. 8b"))
    return Finding(claim, text, shown, (l0, b0, l1, b1))


def mixed_leader(t: pd.DataFrame, who: str, weak: str, mixed: str, strong: str, table: str = "mixed") -> Finding:
    """Does a strong leader with a weak worker land between the all-weak and all-strong teams?

    Paper (App. D.4, Fig. 32): a stronger leader improves the mixed team, but does not make it
    approach the all-strong team. Table: :func:`.tables.team_table` (leader protocol, one row per
    team in column ``who``). Rule: the intervals of SR(mixed) - SR(all-weak) and SR(all-strong) -
    SR(mixed), combined (:func:`_combine`). A team missing: cannot check.
    """
    claim = "App. D.4, Fig. 32: a strong leader lifts a weak worker, but not to the all-strong level"
    ww, wm, ws = ({who: x} for x in (weak, mixed, strong))
    qw, qm, qs = (_q(t, table, x, "SR") for x in (ww, wm, ws))
    if qw is None or qm is None or qs is None:
        return _missing(f"not all three leader teams ({weak}, {mixed}, {strong})", claim)
    lift, gap = _diff_verdict(t, wm, ww), _diff_verdict(t, ws, wm)
    shown = _combine([lift, gap])
    no = ("the paper's lift from a strong leader" if lift is False else "the paper's gap to the all-strong team")
    text = (f"With a leader on parallel tasks, SR is {qm.text} for the {mixed} team (leader first), {qw.text} for "
            f"{weak} and {qs.text} for {strong}. "
            + _ending(shown, "a strong leader helps but does not reach the all-strong level", no,
                      "the mixed team lies between the other two", "Fig. 32"))
    return Finding(claim, text, shown, (qm, qw, qs))


def shared_memory_vs_broadcast(t: pd.DataFrame, structure: str, table: str = "memory") -> Finding:
    """Does shared memory beat broadcast on parallel tasks and lose on sequential ones?

    Paper (§5.3, Figs. 10a, 31; 2 and 4 agents on parallel, 2 on sequential tasks): shared memory
    consistently improves SR on parallel tasks, but degrades it on sequential tasks, where
    precise timing may need explicit messages. Table: :func:`.tables.memory_table` rows of
    ``structure``. Rule: the interval of SR(shared memory) - SR(broadcast) at each team size, the
    paper's sign +1 on parallel and -1 on sequential tasks, combined (:func:`_combine`). No team
    size with both: cannot check.
    """
    claim = "§5.3, Figs. 10, 31: shared memory raises SR on parallel tasks and lowers it on sequential tasks"
    where = {"structure": structure}
    pairs = _pairs(t, table, where, "protocol", "shared_memory", "broadcast", "n_agents")
    if not pairs:
        return _missing(f"no team size with both shared memory and broadcast on {structure} tasks", claim)
    up = structure == "parallel"
    shown = _combine(_pair_verdicts(t, where, "protocol", "shared_memory", "broadcast", pairs, 1 if up else -1))
    listing = _join([f"{qm.text} vs {qb.text} ({_agents(n)})" for n, qm, qb in pairs])
    word = "raises" if up else "lowers"
    text = (f"On {structure} tasks, SR with shared memory vs broadcast is {listing}. "
            + _ending(shown, f"shared memory {word} SR", f"the paper's result that shared memory {word} SR here",
                      f"shared memory {word} SR", "Figs. 10, 31"))
    return Finding(claim, text, shown, tuple(q for _, qm, qb in pairs for q in (qm, qb)))


def shared_memory_progress(t: pd.DataFrame, structure: str = "parallel", table: str = "memory") -> Finding:
    """Does shared memory make progress sooner (higher Step-CR AUC) than broadcast?

    Paper (§5.3, Fig. 10b, Fig. 31 AUC): shared memory accelerates early progress. Table:
    :func:`.tables.memory_table` rows of ``structure`` (AUC with its 95% t interval). Rule: the
    interval of AUC(shared memory) - AUC(broadcast) at each team size (:func:`_diff_verdict`),
    combined (:func:`_combine`). No team size with both: cannot check.
    """
    claim = "§5.3, Fig. 10b: shared memory accelerates early progress (higher AUC)"
    where = {"structure": structure}
    pairs = _pairs(t, table, where, "protocol", "shared_memory", "broadcast", "n_agents", metric="AUC")
    if not pairs:
        return _missing(f"no team size with both shared memory and broadcast on {structure} tasks", claim)
    shown = _combine([_diff_verdict(t, {**where, "protocol": "shared_memory", "n_agents": n},
                                    {**where, "protocol": "broadcast", "n_agents": n}, col="AUC") for n, _, _ in pairs])
    listing = _join([f"{qm.text} vs {qb.text} ({_agents(n)})" for n, qm, qb in pairs])
    text = (f"On {structure} tasks, AUC with shared memory vs broadcast is {listing}. "
            + _ending(shown, "shared memory makes progress sooner", "the paper's faster early progress with shared memory",
                      "shared memory makes progress sooner", "Fig. 10b"))
    return Finding(claim, text, shown, tuple(q for _, qm, qb in pairs for q in (qm, qb)))


def memory_tokens(t: pd.DataFrame, structure: str = "parallel", table: str = "memory") -> Finding:
    """Does shared memory spend fewer tokens per step than broadcast?

    Paper (§5.3, Figs. 10a, 31): shared memory greatly reduces token consumption. Table:
    :func:`.tables.memory_table` (``TokensPerStep``) rows of ``structure``. Rule: both protocols at
    0 tokens (offline policies): cannot be checked (None); else the point comparison at every team
    size (shown when fewer with shared memory).
    """
    claim = "§5.3, Figs. 10a, 31: shared memory spends fewer tokens than broadcast"
    where = {"structure": structure}
    pairs = _pairs(t, table, where, "protocol", "shared_memory", "broadcast", "n_agents", metric="TokensPerStep")
    if not pairs:
        return _missing(f"no team size with both shared memory and broadcast on {structure} tasks", claim)
    pairs = [(n, _refmt(qm, "{:.1f}"), _refmt(qb, "{:.1f}")) for n, qm, qb in pairs]
    quotes = tuple(q for _, qm, qb in pairs for q in (qm, qb))
    if all(_v(qm) == 0 and _v(qb) == 0 for _, qm, qb in pairs):
        return Finding(claim, f"No tokens are spent on {structure} tasks (offline policies), so the paper's token "
                              "saving with shared memory (Figs. 10a, 31) cannot be checked here.", None, ())
    listing = _join([f"{qm.text} vs {qb.text} ({_agents(n)})" for n, qm, qb in pairs])
    shown = all(_v(qm) < _v(qb) for _, qm, qb in pairs)
    text = (f"On {structure} tasks, tokens per step with shared memory vs broadcast are {listing}. "
            + _ending(shown, "shared memory spends fewer tokens", "the paper's token saving", "", "Figs. 10a, 31"))
    return Finding(claim, text, shown, quotes)


def _refmt(q: Quote, fmt: str) -> Quote:
    """The quote printed with another format."""
    return Quote(q.table, q.where, q.column, q.value, fmt.format(q.value), fmt)


# -- §6.1: priors ------------------------------------------------------------------------------------
def budgets_used(t: pd.DataFrame, expected: Mapping[str, int], table: str = "priors") -> Finding:
    """Did each prior run with the paper's budget?

    Paper (§3.1, §6.1): 60 total steps with full priors, extended to 80 for missing or noisy
    location priors (parallel tasks). Table: :func:`.tables.priors_table` (``prior``,
    ``budget``). ``expected`` maps prior -> the paper's budget. Wording: the budgets per prior,
    then "the paper's budgets" (shown) or "not the paper's budgets for <priors>" (shown None: the
    notebook's ``budget`` parameter overrode them, so the run is not comparable with the paper).
    """
    claim = "§3.1, §6.1: 60 steps with full priors, 80 with missing or noisy locations"
    rows = t[["prior", "budget"]].drop_duplicates().sort_values(["prior", "budget"])
    if not len(rows):
        return _missing("no episodes", claim)
    quotes = [Quote(table, (("prior", p), ("budget", bu)), "budget", float(bu), str(int(bu)), "{:.0f}")
              for p, bu in rows.itertuples(index=False)]
    listing = _join([f"{q.text} for {_prior(dict(q.where)['prior'])}" for q in quotes])
    off = sorted({dict(q.where)["prior"] for q in quotes if expected.get(dict(q.where)["prior"]) != int(q.value)})
    shown = True if not off else None  # overridden budgets: the run is not comparable with the paper
    text = (f"Budgets (total steps over the team) are {listing}: " +
            ("the paper's budgets (§3.1, §6.1)." if not off else
             f"not the paper's budgets for {_join([_prior(p) for p in off])} (the budget parameter overrode them; §3.1, §6.1)."))
    return Finding(claim, text, shown, tuple(quotes))


def prior_ablation(t: pd.DataFrame, variant: str, n_agents: int = 2, table: str = "priors") -> Finding:
    """How does SR with prior ``variant`` compare with full priors?

    Paper (§6.1, App. D.5, Table 13, Fig. 35; Tables 3, 16): without location priors
    (``no_location``, ``none``) performance drops substantially for every model; with noisy
    locations SR is lower than with clean ones; without appearance the effect is
    model-dependent. Table: :func:`.tables.priors_table` (prior, budget, n_agents). Rule: for
    missing or noisy locations the interval of SR(variant) - SR(full) with the paper's sign -1
    (:func:`_diff_verdict`); for ``no_appearance`` the intervals are reported and shown is None (the
    paper finds it model-dependent). Missing rows: cannot check.
    """
    claim = f"§6.1, Table 13, Fig. 35: SR with {variant} priors vs full priors"
    rf = select_rows(t, {"prior": "full", "n_agents": n_agents})
    rv = select_rows(t, {"prior": variant, "n_agents": n_agents})
    if len(rf) != 1 or len(rv) != 1:
        return _missing(f"no single row each for full and {_prior(variant)} with {_agents(n_agents)}", claim)
    wf = {"prior": "full", "budget": rf["budget"].iloc[0], "n_agents": n_agents}
    wv = {"prior": variant, "budget": rv["budget"].iloc[0], "n_agents": n_agents}
    (tf, qf), (tv, qv) = _iv(t, table, wf), _iv(t, table, wv)
    if not qf or not qv:
        return _missing(f"no SR for full or {variant} priors with {_agents(n_agents)}", claim)
    body = f"With {_agents(n_agents)} on parallel tasks, SR is {tv} with {_prior(variant)} and {tf} with full priors."
    if variant == "no_appearance":
        return Finding(claim, f"{body} The paper finds the effect of appearance model-dependent (Table 13).", None,
                       (*qv, *qf))
    what = "noisy locations" if variant in NOISY else "missing locations"
    ref = "Tables 3, 16" if variant in NOISY else "Table 13, Fig. 35"
    shown = _diff_verdict(t, wv, wf, sign=-1)
    text = f"{body} " + _ending(shown, f"{what} cost SR", f"the paper's drop in SR with {what}", f"{what} cost SR", ref)
    return Finding(claim, text, shown, (*qv, *qf))


def _gain_quotes(t3: pd.DataFrame, prior: str, table: str) -> tuple[Quote | None, Quote | None, Quote | None]:
    w = {"prior": prior}
    return (_q(t3, table, w, "SR 1 agent"), _q(t3, table, w, "SR 2 agents"),
            _q(t3, table, w, "relative gain", "{:+.0%}"))


def _gain_verdict(t3: pd.DataFrame, prior: str) -> bool | None:
    """The interval of SR(2 agents) - SR(1 agent) under ``prior`` (Wilson from each cell's cases)."""
    row = select_rows(t3, {"prior": prior})
    if len(row) != 1:
        return None
    r = row.iloc[0]
    n1, n2 = int(r.get("cases 1 agent", 0) or 0), int(r.get("cases 2 agents", 0) or 0)
    if not n1 or not n2:
        return None
    a = (float(r["SR 2 agents"]), *wilson(r["SR 2 agents"] * n2, n2))
    b = (float(r["SR 1 agent"]), *wilson(r["SR 1 agent"] * n1, n1))
    _, low, high = rate_difference(a, b)
    return verdict(low, high, 1, n=min(n1, n2), min_n=MIN_UNITS)


def gain_under_missing_priors(t3: pd.DataFrame, table: str = "table3") -> Finding:
    """Does a second agent still help without or with noisy location priors?

    Paper (§6.1, Fig. 12, Table 3): two-agent collaboration improves SR when location
    information is missing or noisy (relative gains >= 0 for every model). Table:
    :func:`.tables.table3_long` rows of the priors in :data:`NO_LOCATION` and :data:`NOISY`. Rule:
    the interval of SR(2 agents) - SR(1 agent) under each such prior (:func:`_gain_verdict`),
    combined (:func:`_combine`). None of these priors: cannot check.
    """
    claim = "§6.1, Fig. 12, Table 3: a second agent raises SR under missing or noisy priors"
    priors = [p for p in (*NO_LOCATION, *NOISY) if t3 is not None and p in set(t3["prior"])]
    rows = [(p, *_gain_quotes(t3, p, table)) for p in priors]
    rows = [r for r in rows if r[1] is not None and r[2] is not None]
    if not rows:
        return _missing("no 1- and 2-agent episodes with missing or noisy location priors", claim)
    shown = _combine([_gain_verdict(t3, p) for p, *_ in rows])
    listing = "; ".join(f"{q1.text} → {q2.text} ({_prior(p)})" for p, q1, q2, _ in rows)
    text = (f"SR with 1 → 2 agents is {listing}. "
            + _ending(shown, "a second agent helps under every missing or noisy prior",
                      "the paper's gain from a second agent under every missing or noisy prior",
                      "a second agent helps under every missing or noisy prior", "Fig. 12, Table 3"))
    return Finding(claim, text, shown, tuple(q for r in rows for q in r[1:3]))


def largest_gain_prior(t3: pd.DataFrame, table: str = "table3") -> Finding:
    """Is the relative gain of a second agent largest with noisy location priors?

    Paper (§6.1, Table 3): collaboration achieves the largest relative SR gains when the
    information contains noise. Table: :func:`.tables.table3_long` (``relative gain`` per prior;
    undefined when 1 agent's SR is 0). Rule (point comparison of printed gains): shown when the
    largest gain belongs to a noisy prior and is above every other prior's; too few units to tell
    when a cell has fewer than :data:`MIN_UNITS` cases. Without a noisy prior or without another
    prior: cannot check.
    """
    claim = "§6.1, Table 3: the relative gain of a second agent is largest with noisy priors"
    if t3 is None:
        return _missing("no 1- and 2-agent episodes", claim)
    gains = {p: q for p in t3["prior"] if (q := _q(t3, table, {"prior": p}, "relative gain", "{:+.0%}")) is not None}
    noisy = [p for p in gains if p in NOISY]
    if not noisy or len(gains) < 2:
        return _missing("no defined relative gain under a noisy prior and another prior", claim)
    order = sorted(gains, key=lambda p: -_v(gains[p]))
    top = order[0]
    small = any(min(int(r["cases 1 agent"]), int(r["cases 2 agents"])) < MIN_UNITS
                for _, r in t3.iterrows() if {"cases 1 agent", "cases 2 agents"} <= set(t3.columns))
    shown = _point(top in NOISY and all(_v(gains[top]) > _v(gains[p]) for p in gains if p not in NOISY), small)
    listing = ", ".join(f"{gains[p].text} ({_prior(p)})" for p in order)
    text = (f"The relative SR gain of a second agent is {listing}. "
            + _ending(shown, f"it is largest with {_prior(top)}",
                      f"the paper's largest gain with noisy priors: it is largest with {_prior(top)}",
                      "the gain is largest with noisy priors", "Table 3"))
    return Finding(claim, text, shown, tuple(gains[p] for p in order))


# -- §6.2 and appendices E-F: failures, corrections --------------------------------------------------
def false_completions(rates: pd.DataFrame, by: str, table: str = "failures") -> Finding:
    """Are false ("task complete") completions rare but destructive?

    Paper (§6.2, Tables 21-22): a hallucinated completion, broadcast to the team, can stop it
    prematurely; it is rare but highly destructive (SR far lower in episodes with one). Table:
    :func:`.tables.failure_rates` (``indicator == "false_completion"``; the ``"all"`` row and one
    row per group of ``by``). Rule: none found: cannot be checked (None); else the interval of SR
    with one minus SR without (Wilson from the counts, Newcombe) with the paper's sign -1.
    """
    claim = "§6.2, Tables 21-22: false completions are destructive"
    sel = select_rows(rates, {"indicator": "false_completion"})
    allw = {by: "all", "indicator": "false_completion"}
    qn, qw = _q(sel, table, allw, "episodes", "{:.0f}"), _q(sel, table, allw, "with", "{:.0f}")
    if qn is None or qw is None:
        return _missing("no episodes", claim)
    if _v(qw) == 0:
        return Finding(claim, f"No episode had a false completion ({qw.text} of {qn.text}), so the paper's destructive "
                              "hallucinated completion (§6.2, Table 22) cannot be checked here.", None, (qw, qn))
    qr = _q(sel, table, allw, "rate", "{:.1%}")
    groups = [g for g in sel[by] if g != "all"]
    grates = {g: q for g in groups if (q := _q(sel, table, {by: g, "indicator": "false_completion"}, "rate", "{:.1%}"))}
    best = max((_v(q) for q in grates.values()), default=0.0)
    tops = [g for g in grates if _v(grates[g]) == best]
    top = tops[0] if len(grates) > 1 and len(tops) == 1 else None
    text = f"{qw.text} of {qn.text} episodes ({qr.text}) had a false completion"
    quotes = [qw, qn, qr]
    if top is not None:
        text += f", most often with {by} {top} ({grates[top].text})"
        quotes.append(grates[top])
    qa, qb = _q(sel, table, allw, "SR with"), _q(sel, table, allw, "SR without")
    if qa is None or qb is None:
        return Finding(claim, text + ". Every episode had one, so SR cannot be compared (§6.2, Table 22).",
                       None, tuple(quotes))
    k, n = int(_v(qw)), int(_v(qn))
    a, b = (qa.value, *wilson(qa.value * k, k)), (qb.value, *wilson(qb.value * (n - k), n - k))
    shown = verdict(*rate_difference(a, b)[1:], -1)
    text += (f". SR is {qa.text} in those episodes and {qb.text} in the others. "
             + _ending(shown, "false completions are destructive", "the paper's destructive false completions",
                       "false completions lower SR", "§6.2, Table 22"))
    return Finding(claim, text, shown, (*quotes, qa, qb))


def _profile_trend(t: pd.DataFrame, where: Mapping[str, Any], column: str, order: Sequence[str], what: str,
                   claim: str, ref: str, table: str, fmt: str, paper: str | None) -> Finding:
    """Is ``column`` rising along the profiles ``order``? ``paper``: what the paper says (for the
    sentence), or None when the paper makes no claim by capability (then ``shown`` is None). Rule
    (point comparison): rising strictly along ``order``; too few units to tell under
    :data:`MIN_UNITS` cases in a profile's cell; a share that is 0 for every profile: cannot check."""
    qs = [(p, q) for p in order if (q := _q(t, table, {**where, "profile": p}, column, fmt)) is not None]
    if len(qs) < 2:
        return _missing(f"fewer than two profiles with {what}", claim)
    if column == "rate" and all(_v(q) == 0 for _, q in qs):
        return Finding(claim, f"No episode of any profile had {what[len('episodes with '):]}, so this cannot be "
                              f"checked here ({ref}).", None, ())
    listing = _join([f"{q.text} ({p})" for p, q in qs])
    rising = all(_v(a) < _v(c) for (_, a), (_, c) in zip(qs, qs[1:]))
    head = f"{_cap(what)}: {listing}."
    span = f"from the {qs[0][0]} to the {qs[-1][0]} profile"
    trend = f"{'rising' if rising else 'not rising steadily'} {span}"
    if paper is None:
        return Finding(claim, f"{head} That is {trend}; the paper reports this over all models only, with no claim "
                              f"by capability ({ref}).", None, tuple(q for _, q in qs))
    shown = _point(rising, _few(t, [{**where, "profile": p} for p, _ in qs]))
    if shown:
        text = f"{head} That is {trend}, in line with the paper: {paper} ({ref})."
    else:
        text = f"{head} " + _ending(shown, "", f"this pattern ({trend}); {paper}", f"it rises {span}", ref)
    return Finding(claim, text, shown, tuple(q for _, q in qs))


def wrong_grabs_by_profile(rates: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                           table: str = "failures") -> Finding:
    """Do weaker profiles grab task-irrelevant objects more often?

    Paper (App. D.5, Table 13 discussion; Table 21 "object misidentification"): models with weaker
    fine-grained visual grounding confuse visually similar objects more often. Table:
    :func:`.tables.failure_rates` by ``profile`` (``indicator == "wrong_grab"``, ``rate``). Rule:
    :func:`_profile_trend` (one decimal %). Fewer than two profiles: cannot check.
    """
    return _profile_trend(rates, {"indicator": "wrong_grab"}, "rate", order,
                          "episodes with a wrong grab", "App. D.5: weaker visual grounding confuses look-alike objects",
                          "App. D.5, Table 21", table, "{:.1%}",
                          "weaker visual grounding makes models confuse look-alike objects")


def dup_grabs_by_profile(rates: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                         table: str = "failures") -> Finding:
    """Do weaker profiles make more duplicate grabs?

    Paper (§6.2, Fig. 37; App. D.1): duplicate-grab rates differ by model and weaker models are
    more affected by coordination overhead. Table: :func:`.tables.failure_rates` by ``profile``
    (``indicator == "dup_grab"``, ``rate``). Rule as :func:`wrong_grabs_by_profile` (no paper claim
    by capability: shown is None).
    """
    return _profile_trend(rates, {"indicator": "dup_grab"}, "rate", order,
                          "episodes with a duplicate grab", "§6.2, Fig. 37: duplicate-grab rates by model",
                          "§6.2, Fig. 37", table, "{:.1%}", None)


def false_completions_by_profile(rates: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                                 table: str = "failures") -> Finding:
    """Do weaker profiles claim a false completion more often?

    Paper (§6.2, Table 22): hallucinated completions come from agents' false beliefs; the paper
    reports them over all models (no per-model claim: shown is None). Table:
    :func:`.tables.failure_rates` by ``profile`` (``indicator == "false_completion"``).
    """
    return _profile_trend(rates, {"indicator": "false_completion"}, "rate", order,
                          "episodes with a false completion", "§6.2, Table 22: false completions by capability",
                          "§6.2, Table 22", table, "{:.1%}", None)


def handover_failures_by_profile(t: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                                 table: str = "profiles") -> Finding:
    """Do weaker profiles fail more handovers?

    Paper (Tables 11-12): the weaker Qwen3-8B-VL has a far higher HFR (66%) than stronger
    models (about 30%) on sequential tasks. Table: :func:`.tables.metric_table` by
    ``structure`` and ``profile`` (sequential rows, ``HFR``). Rule as :func:`wrong_grabs_by_profile`.
    """
    return _profile_trend(t, {"structure": "sequential"}, "HFR", order, "HFR on sequential tasks",
                          "Tables 11-12: weaker models fail more handovers", "Tables 11-12", table, RATE_FORMAT,
                          "there the weaker Qwen3-8B-VL fails the most handovers")


def coordination_queries(t18: pd.DataFrame, structure: str, table: str = "table18") -> Finding:
    """Do episodes with coordination questions have more objects and lower SR?

    Paper (App. E.2, Table 18): cases with a coordination query involve more objects and have
    lower SR: queries react to genuine difficulty. Table:
    :func:`collablab.analysis.coord_query_table` reset to columns (``structure``, ``Q.``, ``#Case``,
    ``Avg. #Obj.``, ``SR (%)``). Rule (point comparison): shown when episodes with a query have
    lower SR and more objects; too few units to tell under :data:`MIN_UNITS` cases on either side.
    No episode with or without a query: cannot check.
    """
    claim = "App. E.2, Table 18: coordination queries come with more objects and lower SR"
    w, wo = {"structure": structure, "Q.": "w/ Q."}, {"structure": structure, "Q.": "w/o Q."}
    sw, so = _q(t18, table, w, "SR (%)", "{:.1f}%"), _q(t18, table, wo, "SR (%)", "{:.1f}%")
    ow, oo = _q(t18, table, w, "Avg. #Obj."), _q(t18, table, wo, "Avg. #Obj.")
    if sw is None or so is None or ow is None or oo is None:
        return _missing(f"{structure} episodes only with or only without a coordination query", claim)
    shown = _point(_v(sw) < _v(so) and _v(ow) > _v(oo), _few(t18, [w, wo]))
    text = (f"On {structure} tasks, episodes with a coordination query have SR {sw.text} and {ow.text} objects on "
            f"average, against {so.text} and {oo.text} without one. "
            + _ending(shown, "queries come with harder episodes", "the paper's pattern of lower SR and more objects",
                      "queries come with harder episodes", "Table 18"))
    return Finding(claim, text, shown, (sw, ow, so, oo))


def correction_effect(t19: pd.DataFrame, group: str, table: str = "table19") -> Finding:
    """After stratifying by the number of wrong grabs, does correction raise SR and CR?

    Paper (App. E.2, Tables 19-20): raw comparisons make correction look harmful for SR, but after
    severity adjustment correction improves both SR and CR in both task types. Table:
    ``CorrectionAnalysis.table19`` reset to columns (``group``, ``cond``, ``row``, ``SR (%)``,
    ``CR (%)``). Rule (point comparison, one decimal pp): shown when the adjusted ΔSR and ΔCR are
    both positive (the analysis itself needs enough wrong-grab episodes per stratum). No adjusted
    effect: cannot check.
    """
    claim = "App. E.2, Tables 19-20: severity-adjusted, correction raises SR and CR"
    adj = {"group": group, "cond": "WG", "row": "Adj. Δ"}
    raw = {"group": group, "cond": "WG", "row": "Raw Δ"}
    qs, qc = _q(t19, table, adj, "SR (%)", "{:+.1f} pp"), _q(t19, table, adj, "CR (%)", "{:+.1f} pp")
    rs = _q(t19, table, raw, "SR (%)", "{:+.1f} pp")
    if qs is None or qc is None:
        return _missing(f"too few {group} episodes with a wrong grab, with and without correction, for the adjusted effect", claim)
    shown = _v(qs) > 0 and _v(qc) > 0
    text = (f"On {group} tasks with a wrong grab, correction changes SR by {qs.text} and CR by {qc.text} after "
            "severity adjustment" + (f" (raw SR difference {rs.text})" if rs is not None else "") + ". "
            + _ending(shown, "correction helps", "the paper's adjusted gain from correction in both SR and CR", "",
                      "Tables 19-20"))
    return Finding(claim, text, shown, tuple(q for q in (qs, qc, rs) if q is not None))


def self_correction_by_profile(t: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                               table: str = "corrections") -> Finding:
    """Are self-corrections triggered by wrong grabs, for every profile?

    Paper (App. E.2, Table 19; Table 17 "self-correction"): correction is mainly triggered by
    execution errors. Table: :func:`.tables.correction_rates` by ``profile`` (share of episodes
    with a self-correction among those with and without a wrong grab). Rule (point comparison):
    shown when, for every profile with both kinds of episode, the share is higher with a wrong
    grab; too few units to tell under :data:`MIN_UNITS` episodes in a cell. No profile with both:
    cannot check.
    """
    claim = "App. E.2, Table 19: self-corrections follow wrong grabs"
    rows = []
    for p in order:
        qa = _q(t, table, {"profile": p, "wrong_grab": True}, "rate", "{:.1%}")
        qb = _q(t, table, {"profile": p, "wrong_grab": False}, "rate", "{:.1%}")
        if qa is not None and qb is not None:
            rows.append((p, qa, qb))
    if not rows:
        return _missing("no profile with episodes both with and without a wrong grab", claim)
    off = [p for p, qa, qb in rows if not _v(qa) > _v(qb)]
    few = _few(t, [{"profile": p, "wrong_grab": wg} for p, _, _ in rows for wg in (True, False)])
    shown = _point(not off, few)
    listing = "; ".join(f"{qa.text} vs {qb.text} ({p})" for p, qa, qb in rows)
    text = (f"Episodes with a self-correction, with vs without a wrong grab: {listing}. "
            + _ending(shown, "self-corrections follow wrong grabs for every profile",
                      f"the paper's error-triggered correction for {_join(off)}" if off else "the paper's pattern",
                      "self-corrections follow wrong grabs", "Table 19"))
    return Finding(claim, text, shown, tuple(q for _, qa, qb in rows for q in (qa, qb)))


__all__ = [
    "MIN_UNITS", "NOISY", "NO_LOCATION", "Finding", "Quote", "Report", "backend_of", "budgets_used",
    "communication_by_structure", "communication_gap_widens", "communication_helps", "coordination_queries",
    "correction_effect", "dup_grabs_by_profile", "false_completions", "false_completions_by_profile",
    "gain_under_missing_priors", "handover_failures_by_profile", "handover_failures_without_communication",
    "inverted_u", "largest_gain_prior", "leader_scaling", "memory_tokens", "mixed_leader", "objects_decline",
    "objects_robust", "prior_ablation", "protocol_ranking", "quote", "second_agent_gain", "self_correction_by_profile",
    "shared_memory_progress", "shared_memory_vs_broadcast", "verdict", "wrong_grabs_by_profile",
]
