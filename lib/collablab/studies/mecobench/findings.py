"""Sentences about a run's results, written from its result tables (MECoBench §4-6).

Every function here takes result tables (long DataFrames from :mod:`.tables`, each with a
``backend`` column) and returns a :class:`Finding`: a sentence whose wording depends on the
numbers, the numbers it quotes (each a :class:`Quote` naming the table cell it came from) and
whether the run shows the paper's effect (``shown``: True, False, or None when the run cannot
tell). Comparisons use the numbers as printed (two decimals, or as the quote shows them), so the
wording never contradicts the quoted numbers. Every sentence starts with the backend label, and
where a run does not show a paper's effect the sentence says so and names the backend. Each
function's docstring states the paper's claim it checks and when each wording is chosen.

A :class:`Report` gathers a notebook's tables and findings by section; the notebooks display
``report.show(section)`` (IPython Markdown) and nothing else interprets results.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from ...analysis.findings import Finding, Quote, Report, backend_of, lead, quote, select_rows

#: Prior variants without location information, and with noisy locations (tasks.PRIOR_FIELDS).
NO_LOCATION = ("no_location", "none")
NOISY = ("noisy", "noisy_no_appearance")


# -- helpers -----------------------------------------------------------------------------------------
def _the(backend: str) -> str:
    return f"the {backend} backend" + ("s" if "," in backend else "")



def _backend(t: pd.DataFrame | None, where: Mapping[str, Any]) -> str:
    """The backend of the rows ``where`` selects, or of the whole table when they are none."""
    if t is None:
        return backend_of(None)
    sel = t
    for k, v in where.items():
        if k in sel.columns:
            sel = sel[sel[k] == v]
    return backend_of(sel if len(sel) else t)


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


def _missing(backend: str, what: str, claim: str) -> Finding:
    return Finding(claim, lead(backend, f"Not checked ({claim}): this run has {what}."), None)


#: How the sentences name the prior variants (tasks.PRIOR_FIELDS).
PRIOR_LABELS = {"full": "full priors", "no_appearance": "no-appearance priors", "no_location": "no-location priors",
                "none": "no priors", "noisy": "noisy priors", "noisy_no_appearance": "noisy no-appearance priors"}


def _prior(p: Any) -> str:
    return PRIOR_LABELS.get(str(p), f"{p} priors")


def _peaks(ns: Sequence[int], vals: Sequence[float]) -> str:
    """"the same at every team size" or "highest with 2 and 3 agents"."""
    top = [n for n, v in zip(ns, vals) if v == max(vals)]
    if len(top) == len(ns):
        return "the same at every team size"
    return f"highest with {_join([str(n) for n in top])} agent" + ("" if top == [1] else "s")


def _change(metric: str, q1: Quote, q2: Quote) -> str:
    """"SR rises from 0.40 (1 agent) to 0.50 (2 agents)" / "SR is 0.40 with both 1 and 2 agents"."""
    a, b = _v(q1), _v(q2)
    if a == b:
        return f"{metric} is {q1.text} with 1 agent and {q2.text} with 2 agents"
    return f"{metric} {'rises' if b > a else 'falls'} from {q1.text} (1 agent) to {q2.text} (2 agents)"


def _sizes(t: pd.DataFrame, where: Mapping[str, Any], x: str = "n_agents") -> list[int]:
    return sorted(int(n) for n in select_rows(t, where)[x].dropna().unique())


# -- §4: does collaboration help? --------------------------------------------------------------------
def second_agent_gain(t8: pd.DataFrame, structure: str = "parallel") -> Finding:
    """Does a second agent raise SR (and AUC)?

    Paper (§4.1, Fig. 6, Table 8): on parallel tasks most models benefit from a second agent
    (SR and CR rise from 1 to 2 agents under the same 60-step budget); AUC moves either way.
    Table: :func:`.tables.table8` (``structure``, ``n_agents``, ``SR``, ``AUC``).
    Wording: SR and AUC each "rises"/"falls"/"stays" (two decimals). When SR rises (shown):
    "..., as for most models in the paper (Fig. 6, Table 8)"; otherwise "...; <backend> does not
    show the paper's gain from a second agent here". Without both team sizes: cannot check.
    """
    claim = "§4.1, Fig. 6, Table 8: a second agent raises SR on parallel tasks"
    b = backend_of(t8)
    q = {(m, n): quote(t8, "table8", {"structure": structure, "n_agents": n}, m) for m in ("SR", "AUC") for n in (1, 2)}
    if q["SR", 1] is None or q["SR", 2] is None:
        return _missing(b, f"no 1- and 2-agent broadcast episodes on {structure} tasks", claim)
    s1, s2 = q["SR", 1], q["SR", 2]
    text = f"On {structure} tasks with broadcast, {_change('SR', s1, s2)}"
    quotes = [s1, s2]
    if q["AUC", 1] is not None and q["AUC", 2] is not None:
        a1, a2 = q["AUC", 1], q["AUC", 2]
        text += f", and {_change('AUC', a1, a2)}"
        quotes += [a1, a2]
    shown = _v(s2) > _v(s1)
    text += ("; a second agent raises SR, as for most models in the paper (Fig. 6, Table 8)." if shown else
             f"; a second agent does not raise SR, so {_the(b)} does not show the paper's gain from a second agent "
             "here (Fig. 6, Table 8).")
    return Finding(claim, lead(b, text), shown, tuple(quotes))


def inverted_u(t: pd.DataFrame, where: Mapping[str, Any], metric: str = "SR", table: str = "scaling",
               figure: str = "Table 9, Fig. 7a") -> Finding:
    """Does ``metric`` rise and then fall as the team grows (an inverted U)?

    Paper (§4.2, Table 9, Fig. 7a; without location priors Figs. 13a, 34, Table 15): under a fixed
    total budget, performance first improves with more agents, then saturates and degrades.
    Table: :func:`.tables.scaling_table` rows selected by ``where`` (e.g. structure, prior,
    protocol), one per team size. Wording (two decimals): shown when the highest value is at a
    team size strictly inside the sweep and above both the smallest and the largest team: "...: it
    rises to a peak at k agents and falls after it, an inverted U as in the paper"; otherwise
    "...: highest at k agents; it does not rise and fall across team sizes; <backend> does not show
    the paper's inverted U here". Fewer than three team sizes: cannot check.
    """
    claim = f"§4.2, {figure}: {metric} follows an inverted U over team sizes"
    b = _backend(t, where)
    sizes = _sizes(t, where)
    qs = [q for n in sizes if (q := quote(t, table, {**where, "n_agents": n}, metric)) is not None]
    if len(qs) < 3:
        return _missing(b, f"fewer than three team sizes {_cond(where)}", claim)
    ns = [dict(q.where)["n_agents"] for q in qs]
    vals = [_v(q) for q in qs]
    peak = vals.index(max(vals))
    listing = _join([f"{q.text} ({_agents(n)})" for q, n in zip(qs, ns)])
    head = f"{_cap(_cond(where))}, {metric} by team size is {listing}"
    shown = 0 < peak < len(vals) - 1 and vals[peak] > vals[0] and vals[peak] > vals[-1]
    if shown:
        text = f"{head}: it rises to a peak at {_agents(ns[peak])} and falls after it, an inverted U as in the paper ({figure})."
    else:
        text = (f"{head}: {_peaks(ns, vals)}; it does not rise and fall across team sizes, so "
                f"{_the(b)} does not show the paper's inverted U here ({figure}).")
    return Finding(claim, lead(b, text), shown, tuple(qs))


def _pairs(t: pd.DataFrame, table: str, where: Mapping[str, Any], col: str, a: str, b: str, x: str,
           metric: str = "SR") -> list[tuple[int, Quote, Quote]]:
    out = []
    for n in _sizes(t, where, x):
        qa = quote(t, table, {**where, col: a, x: n}, metric)
        qb = quote(t, table, {**where, col: b, x: n}, metric)
        if qa is not None and qb is not None:
            out.append((n, qa, qb))
    return out


def communication_helps(t: pd.DataFrame, where: Mapping[str, Any], table: str = "scaling") -> Finding:
    """Do agents that talk (broadcast) beat agents that cannot (isolated) at every team size?

    Paper (§5.2, Fig. 9, Table 9): disabling communication consistently degrades performance,
    at every team size from 2 to 5. Table: :func:`.tables.scaling_table` (``protocol`` broadcast
    and isolated, team sizes >= 2) within ``where`` (structure, prior). Wording (SR, two
    decimals): shown when broadcast's SR is above isolated's at every team size: "broadcast beats
    isolated agents at every team size ..., as in the paper"; otherwise it names the sizes where
    it does not and says <backend> does not show the paper's consistent cost of removing
    communication. No team size with both protocols: cannot check.
    """
    claim = "§5.2, Fig. 9, Table 9: removing communication lowers SR at every team size"
    b = _backend(t, where)
    pairs = [p for p in _pairs(t, table, where, "protocol", "broadcast", "isolated", "n_agents") if p[0] >= 2]
    if not pairs:
        return _missing(b, f"no team of 2 or more agents with both broadcast and isolated {_cond(where)}", claim)
    listing = _join([f"{qa.text} vs {qb.text} with {_agents(n)}" for n, qa, qb in pairs])
    loses = [n for n, qa, qb in pairs if not _v(qa) > _v(qb)]
    quotes = tuple(q for _, qa, qb in pairs for q in (qa, qb))
    where_txt = _cond({k: v for k, v in where.items() if k != "protocol"})
    if not loses:
        text = (f"{_cap(where_txt)}, broadcast beats isolated agents at every team size (SR {listing}): "
                "communication helps, as in the paper (Fig. 9b, Table 9).")
    else:
        which = "at any team size" if len(loses) == len(pairs) else f"with {_join([str(n) for n in loses])} agents"
        text = (f"{_cap(where_txt)}, broadcast does not beat isolated agents {which} (SR {listing}); "
                f"{_the(b)} does not show the paper's consistent cost of removing communication here (Fig. 9b, Table 9).")
    return Finding(claim, lead(b, text), not loses, quotes)


def communication_gap_widens(t: pd.DataFrame, where: Mapping[str, Any], table: str = "scaling") -> Finding:
    """Does the SR gap between broadcast and isolated agents grow with the team?

    Paper (§5.2, Fig. 9b): when the number of agents grows, the gap between communication and no
    communication widens. Table: :func:`.tables.scaling_table` within ``where``. Wording (SR, two
    decimals): shown when broadcast minus isolated is larger at the largest team than at the
    smallest team of 2 or more: "the gap grows from ... to ..., as in the paper"; otherwise "does not
    grow ...; <backend> does not show the paper's widening gap here". Fewer than two team sizes
    with both protocols: cannot check.
    """
    claim = "§5.2, Fig. 9b: the broadcast-isolated gap widens as teams grow"
    b = _backend(t, where)
    pairs = [p for p in _pairs(t, table, where, "protocol", "broadcast", "isolated", "n_agents") if p[0] >= 2]
    if len(pairs) < 2:
        return _missing(b, f"fewer than two team sizes of 2 or more with both broadcast and isolated {_cond(where)}", claim)
    (n0, a0, b0), (n1, a1, b1) = pairs[0], pairs[-1]
    shown = round(_v(a1) - _v(b1), 2) > round(_v(a0) - _v(b0), 2)
    span = (f"from {_agents(n0)} (SR {a0.text} with broadcast vs {b0.text} isolated) "
            f"to {_agents(n1)} ({a1.text} vs {b1.text})")
    where_txt = _cond({k: v for k, v in where.items() if k != "protocol"})
    text = (f"{_cap(where_txt)}, the SR gap between broadcast and isolated agents grows {span}, as in the paper (Fig. 9b)."
            if shown else
            f"{_cap(where_txt)}, the SR gap between broadcast and isolated agents does not grow {span}; "
            f"{_the(b)} does not show the paper's widening gap here (Fig. 9b).")
    return Finding(claim, lead(b, text), shown, (a0, b0, a1, b1))


def communication_by_structure(t11: pd.DataFrame) -> Finding:
    """Is the cost of removing communication larger on sequential than on parallel tasks?

    Paper (§5.2, Fig. 9a, Table 11): without communication performance drops on both structures,
    with a much larger drop on sequential tasks (zones and handovers). Table:
    :func:`.tables.table11` (2 agents, broadcast vs isolated per structure). Wording (SR, two
    decimals): shown when broadcast minus isolated is positive on sequential tasks and larger
    than on parallel tasks: "..., as in the paper"; otherwise "the drop ... is not larger on
    sequential tasks; <backend> does not show ...". A structure missing: cannot check.
    """
    claim = "§5.2, Fig. 9a, Table 11: removing communication costs more on sequential tasks"
    b = backend_of(t11)
    q = {(s, p): quote(t11, "table11", {"structure": s, "protocol": p}, "SR")
         for s in ("parallel", "sequential") for p in ("broadcast", "isolated")}
    if any(v is None for v in q.values()):
        return _missing(b, "2-agent broadcast and isolated teams on only one structure, or on none", claim)
    dp = round(_v(q["parallel", "broadcast"]) - _v(q["parallel", "isolated"]), 2)
    ds = round(_v(q["sequential", "broadcast"]) - _v(q["sequential", "isolated"]), 2)
    shown = ds > 0 and ds > dp
    body = (f"with 2 agents, SR is {q['sequential', 'broadcast'].text} with broadcast vs {q['sequential', 'isolated'].text} "
            f"isolated on sequential tasks and {q['parallel', 'broadcast'].text} vs {q['parallel', 'isolated'].text} on parallel tasks")
    text = (f"{_cap(body)}: removing communication costs more on sequential tasks, as in the paper (Fig. 9a, Table 11)."
            if shown else
            f"{_cap(body)}: removing communication does not cost more on sequential tasks; {_the(b)} does not "
            "show the paper's larger sequential drop here (Fig. 9a, Table 11).")
    return Finding(claim, lead(b, text), shown, tuple(q.values()))


def handover_failures_without_communication(t11: pd.DataFrame) -> Finding:
    """Do handovers fail more often without communication (sequential tasks)?

    Paper (App. D.2, Table 11): in sequential tasks agents without communication fail to
    coordinate cross-zone handovers, so HFR rises substantially. Table: :func:`.tables.table11`
    (sequential rows, ``HFR``; NaN when no handover was attempted). Wording (two decimals): shown
    when isolated HFR is above broadcast HFR: "..., as in the paper"; otherwise "... not higher ...;
    <backend> does not show ...". A missing HFR (no handover attempted, "NA" in Table 11): cannot
    check.
    """
    claim = "App. D.2, Table 11: HFR rises without communication on sequential tasks"
    b = backend_of(t11)
    qb = quote(t11, "table11", {"structure": "sequential", "protocol": "broadcast"}, "HFR")
    qi = quote(t11, "table11", {"structure": "sequential", "protocol": "isolated"}, "HFR")
    if qb is None or qi is None:
        return _missing(b, "no handover attempt by a 2-agent broadcast or isolated team on sequential tasks (HFR is NA)", claim)
    shown = _v(qi) > _v(qb)
    body = f"On sequential tasks with 2 agents, HFR is {qi.text} isolated vs {qb.text} with broadcast"
    text = (f"{body}: handovers fail more often without communication, as in the paper (Table 11)." if shown else
            f"{body}: handovers do not fail more often without communication; {_the(b)} does not show the "
            "paper's rise in HFR here (Table 11).")
    return Finding(claim, lead(b, text), shown, (qi, qb))


def objects_decline(trends: pd.DataFrame, where: Mapping[str, Any], table: str = "trends",
                    figure: str = "Fig. 7b, Fig. 36") -> Finding:
    """Does SR fall as tasks have more objects?

    Paper (§4.2, Fig. 7b; App. D.6, Fig. 36 for parallel, sequential and no-location tasks): SR
    declines with the number of target objects. Table: :func:`.tables.objects_trends` (slope of
    SR per object, per team size) within ``where`` (structure, prior). Wording (slopes, two
    decimals): shown when every team size's slope is negative: "SR falls with the number of
    objects for every team size ..., as in the paper"; otherwise names the team sizes whose slope
    is not negative and says <backend> does not show the decline for them. No slope (one object
    count): cannot check.
    """
    claim = f"§4.2, App. D.6, {figure}: SR declines with the number of objects"
    b = _backend(trends, where)
    qs = [q for n in _sizes(trends, where) if (q := quote(trends, table, {**where, "n_agents": n}, "slope")) is not None]
    if not qs:
        return _missing(b, f"no trend line over two or more object counts {_cond(where)}", claim)
    ns = [dict(q.where)["n_agents"] for q in qs]
    listing = _join([f"{q.text} ({_agents(n)})" for q, n in zip(qs, ns)])
    flat = [n for q, n in zip(qs, ns) if not _v(q) < 0]
    head = f"{_cap(_cond(where))}, the fitted SR slope per extra object is {listing}"
    if not flat:
        text = f"{head}: SR falls as tasks have more objects, as in the paper ({figure})."
    else:
        text = (f"{head}: SR does not fall with more objects for {_join([_agents(n) for n in flat])}; "
                f"{_the(b)} does not show the paper's decline there ({figure}).")
    return Finding(claim, lead(b, text), not flat, tuple(qs))


def objects_robust(trends: pd.DataFrame, where: Mapping[str, Any], table: str = "trends",
                   figure: str = "Fig. 7b") -> Finding:
    """Do larger teams hold up better on tasks with many objects (a flatter SR slope)?

    Paper (§4.2, Fig. 7b, Table 10; without location priors Fig. 34b): multi-agent teams keep a
    more robust SR on complex tasks, i.e. their SR-vs-objects line is flatter than one agent's.
    Table: :func:`.tables.objects_trends` within ``where``. Wording (slopes, two decimals): shown
    when every multi-agent slope is above (flatter than) the 1-agent slope: "..., as in the paper";
    otherwise names the team sizes that are not flatter and says <backend> does not show it. No
    1-agent slope or no multi-agent slope: cannot check.
    """
    claim = f"§4.2, {figure}: multi-agent teams decline less with more objects"
    b = _backend(trends, where)
    q1 = quote(trends, table, {**where, "n_agents": 1}, "slope")
    qs = [q for n in _sizes(trends, where) if n > 1 and (q := quote(trends, table, {**where, "n_agents": n}, "slope"))]
    if q1 is None or not qs:
        return _missing(b, f"no 1-agent and multi-agent trend lines {_cond(where)}", claim)
    ns = [dict(q.where)["n_agents"] for q in qs]
    steeper = [n for q, n in zip(qs, ns) if not _v(q) > _v(q1)]
    head = (f"{_cap(_cond(where))}, the SR slope per extra object is {q1.text} with 1 agent and "
            f"{_join([f'{q.text} with {_agents(n)}' for q, n in zip(qs, ns)])}")
    if not steeper:
        text = f"{head}: every larger team holds up better on tasks with more objects, as in the paper ({figure})."
    else:
        text = (f"{head}: the line is not flatter for {_join([_agents(n) for n in steeper])}; {_the(b)} does not "
                f"show the paper's more robust larger teams there ({figure}).")
    return Finding(claim, lead(b, text), not steeper, (q1, *qs))


# -- §5: which mode works? ---------------------------------------------------------------------------
def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


def protocol_ranking(t: pd.DataFrame, structure: str, table: str = "modes") -> Finding:
    """Which protocol has the highest SR with two agents, and do isolated agents rank last?

    Paper (§5.1, Fig. 8a, Table 12): leader-based collaboration achieves the best overall
    performance for most models; (§5.2, Fig. 9a, Table 12) without communication performance is
    the lowest. Table: :func:`.tables.modes_table` rows of ``structure`` (one per protocol).
    Wording (SR, two decimals; ties share a rank): the ranking, then "The leader ranks first, as
    for most models in the paper" or "The leader ranks k-th, not first as for most models in the
    paper; <backend> does not show it here", then "Isolated agents rank last, as in the paper" or
    "Isolated agents do not rank last ...". shown: both parts hold. Without leader or isolated
    rows, that part is left out; without either: cannot check.
    """
    claim = "§5.1, §5.2, Figs. 8a, 9a, Table 12: the leader ranks first and isolated agents last (2 agents)"
    b = _backend(t, {"structure": structure})
    protos = list(select_rows(t, {"structure": structure})["protocol"])
    qs = {p: q for p in protos if (q := quote(t, table, {"structure": structure, "protocol": p}, "SR")) is not None}
    if len(qs) < 2 or not ({"leader", "isolated"} & set(qs)):
        return _missing(b, f"fewer than two protocols, or neither leader nor isolated, on {structure} tasks", claim)
    order = sorted(qs, key=lambda p: -_v(qs[p]))
    rank = {p: 1 + sum(_v(qs[o]) > _v(qs[p]) for o in qs) for p in qs}
    listing = ", ".join(f"{p} {qs[p].text}" for p in order)
    text = f"On {structure} tasks with 2 agents, SR by protocol is {listing}."
    parts = []
    best = [p for p in qs if rank[p] == 1]
    if len(best) == len(qs):
        text = (f"On {structure} tasks with 2 agents, SR is {qs[order[0]].text} with every protocol ({', '.join(order)}): "
                f"no protocol ranks above another, so {_the(b)} does not show the paper's ranking here (Figs. 8a, 9a).")
        return Finding(claim, lead(b, text), False, tuple(qs[p] for p in order))
    if "leader" in qs:
        if best == ["leader"]:
            text += " The leader ranks first, as for most models in the paper (Fig. 8a)."
        elif rank["leader"] == 1:
            text += (f" The leader shares first place with {_join([p for p in best if p != 'leader'])}, so it is not "
                     f"clearly first as for most models in the paper; {_the(b)} does not show it here (Fig. 8a).")
        else:
            text += (f" The leader ranks {_ordinal(rank['leader'])}, not first as for most models in the paper; "
                     f"{_the(b)} does not show it here (Fig. 8a).")
        parts.append(best == ["leader"])
    if "isolated" in qs:
        last = all(_v(qs["isolated"]) < _v(qs[p]) for p in qs if p != "isolated")
        text += (" Isolated agents rank last, as in the paper (Fig. 9a, Table 12)." if last else
                 f" Isolated agents do not rank last, unlike the paper where no communication is worst; {_the(b)} "
                 "does not show it here (Fig. 9a, Table 12).")
        parts.append(last)
    return Finding(claim, lead(b, text), all(parts), tuple(qs[p] for p in order))


def leader_scaling(t: pd.DataFrame, where: Mapping[str, Any], table: str = "scaling") -> Finding:
    """Does the leader's edge over broadcast shrink as the team grows?

    Paper (§5.1, Fig. 8b): centralized (leader) coordination is effective in small teams but
    saturates as team size increases, while decentralized broadcast becomes more competitive.
    Table: :func:`.tables.scaling_table` (``protocol`` leader and broadcast) within ``where``.
    Wording (SR, two decimals): shown when the leader beats broadcast in the smallest team and
    leader minus broadcast is smaller at the largest team: "the leader's edge shrinks ..., as in
    the paper"; when the leader does not beat broadcast in the smallest team: "the leader does not
    beat broadcast in the smallest team ..."; otherwise "does not shrink ..."; both with "<backend>
    does not show ...". Fewer than two team sizes with both: cannot check.
    """
    claim = "§5.1, Fig. 8b: the leader's advantage over broadcast shrinks as teams grow"
    b = _backend(t, where)
    pairs = _pairs(t, table, where, "protocol", "leader", "broadcast", "n_agents")
    if len(pairs) < 2:
        return _missing(b, f"fewer than two team sizes with both leader and broadcast {_cond(where)}", claim)
    (n0, l0, b0), (n1, l1, b1) = pairs[0], pairs[-1]
    g0, g1 = round(_v(l0) - _v(b0), 2), round(_v(l1) - _v(b1), 2)
    shown = g0 > 0 and g1 < g0
    span = (f"SR {l0.text} with a leader vs {b0.text} with broadcast at {_agents(n0)}, "
            f"{l1.text} vs {b1.text} at {_agents(n1)}")
    where_txt = _cap(_cond({k: v for k, v in where.items() if k != "protocol"}))
    if shown:
        text = f"{where_txt}, {span}: the leader's edge over broadcast shrinks as the team grows, as in the paper (Fig. 8b)."
    elif g0 <= 0:
        text = (f"{where_txt}, {span}: the leader does not beat broadcast in the smallest team, so {_the(b)} does not "
                "show the paper's leader that helps small teams and then saturates (Fig. 8b).")
    else:
        text = (f"{where_txt}, {span}: the leader's edge over broadcast does not shrink as the team grows; {_the(b)} "
                "does not show the paper's saturating leader here (Fig. 8b).")
    return Finding(claim, lead(b, text), shown, (l0, b0, l1, b1))


def mixed_leader(t: pd.DataFrame, who: str, weak: str, mixed: str, strong: str, table: str = "mixed") -> Finding:
    """Does a strong leader with a weak worker land between the all-weak and all-strong teams?

    Paper (App. D.4, Fig. 32): a stronger leader improves the mixed team, but does not make it
    approach the all-strong team (its SR is only slightly above the average of the two). Table:
    :func:`.tables.team_table` (leader protocol, one row per team in column ``who``). Wording
    (SR, two decimals): shown when all-weak < mixed < all-strong: "above the all-weak team but
    below the all-strong team, as in the paper" (and whether it is above or below their
    midpoint); mixed <= all-weak: "no better than the all-weak team"; mixed >= all-strong:
    "matches or beats the all-strong team"; both with "<backend> does not show ...". A team
    missing: cannot check.
    """
    claim = "App. D.4, Fig. 32: a strong leader lifts a weak worker, but not to the all-strong level"
    b = backend_of(t)
    qw, qm, qs = (quote(t, table, {who: x}, "SR") for x in (weak, mixed, strong))
    if qw is None or qm is None or qs is None:
        return _missing(b, f"not all three leader teams ({weak}, {mixed}, {strong})", claim)
    w, m, s = _v(qw), _v(qm), _v(qs)
    body = (f"With a leader on parallel tasks, the {mixed} team (leader first) reaches SR {qm.text}, "
            f"the all-weak {weak} team {qw.text} and the all-strong {strong} team {qs.text}")
    if w < m < s:
        side = "above" if m > (w + s) / 2 else "below" if m < (w + s) / 2 else "at"
        text = (f"{body}: between the two, {side} their midpoint; a strong leader helps but does not reach the "
                "all-strong level, as in the paper (Fig. 32).")
    elif m <= w:
        text = (f"{body}: the strong leader makes the team no better than the all-weak one; {_the(b)} does not "
                "show the paper's lift from a strong leader here (Fig. 32).")
    else:
        text = (f"{body}: the mixed team matches or beats the all-strong one; {_the(b)} does not show the paper's "
                "gap to the all-strong team here (Fig. 32).")
    return Finding(claim, lead(b, text), w < m < s, (qm, qw, qs))


def shared_memory_vs_broadcast(t: pd.DataFrame, structure: str, table: str = "memory") -> Finding:
    """Does shared memory beat broadcast on parallel tasks and lose on sequential ones?

    Paper (§5.3, Figs. 10a, 31; 2 and 4 agents on parallel, 2 on sequential tasks): shared memory
    consistently improves SR on parallel tasks, but degrades it on sequential tasks, where
    precise timing may need explicit messages. Table: :func:`.tables.memory_table` rows of
    ``structure`` (broadcast and shared_memory per team size). Wording (SR, two decimals): the
    expected direction is "higher" on parallel and "lower" on sequential tasks; shown when
    shared memory's SR is in that direction at every team size: "..., as in the paper";
    otherwise names the team sizes where it is not and says <backend> does not show it. No team
    size with both: cannot check.
    """
    claim = "§5.3, Figs. 10, 31: shared memory raises SR on parallel tasks and lowers it on sequential tasks"
    where = {"structure": structure}
    b = _backend(t, where)
    pairs = _pairs(t, table, where, "protocol", "shared_memory", "broadcast", "n_agents")
    if not pairs:
        return _missing(b, f"no team size with both shared memory and broadcast on {structure} tasks", claim)
    up = structure == "parallel"
    word = "higher" if up else "lower"
    off = [n for n, qm, qb in pairs if not (_v(qm) > _v(qb) if up else _v(qm) < _v(qb))]
    listing = _join([f"{qm.text} vs {qb.text} with {_agents(n)}" for n, qm, qb in pairs])
    head = f"On {structure} tasks, SR with shared memory vs broadcast is {listing}"
    paper = ("where shared memory helps parallel tasks" if up else "where shared memory hurts sequential tasks")
    if not off:
        text = f"{head}: {word} at every team size, as in the paper, {paper} (Figs. 10, 31)."
    else:
        text = (f"{head}: not {word} with {_join([str(n) for n in off])} agents; {_the(b)} does not show the "
                f"paper's result, {paper}, here (Figs. 10, 31).")
    return Finding(claim, lead(b, text), not off, tuple(q for _, qm, qb in pairs for q in (qm, qb)))


def shared_memory_progress(t: pd.DataFrame, structure: str = "parallel", table: str = "memory") -> Finding:
    """Does shared memory make progress sooner (higher Step-CR AUC) than broadcast?

    Paper (§5.3, Fig. 10b, Fig. 31 AUC): shared memory accelerates early progress. Table:
    :func:`.tables.memory_table` rows of ``structure``. Wording (AUC, two decimals): shown when
    shared memory's AUC is above broadcast's at every team size: "..., as in the paper";
    otherwise names the team sizes where it is not and says <backend> does not show it. No team
    size with both: cannot check.
    """
    claim = "§5.3, Fig. 10b: shared memory accelerates early progress (higher AUC)"
    where = {"structure": structure}
    b = _backend(t, where)
    pairs = _pairs(t, table, where, "protocol", "shared_memory", "broadcast", "n_agents", metric="AUC")
    if not pairs:
        return _missing(b, f"no team size with both shared memory and broadcast on {structure} tasks", claim)
    off = [n for n, qm, qb in pairs if not _v(qm) > _v(qb)]
    listing = _join([f"{qm.text} vs {qb.text} with {_agents(n)}" for n, qm, qb in pairs])
    head = f"On {structure} tasks, AUC with shared memory vs broadcast is {listing}"
    text = (f"{head}: shared memory makes progress sooner at every team size, as in the paper (Fig. 10b)." if not off else
            f"{head}: shared memory does not make progress sooner with {_join([str(n) for n in off])} agents; "
            f"{_the(b)} does not show the paper's faster early progress here (Fig. 10b).")
    return Finding(claim, lead(b, text), not off, tuple(q for _, qm, qb in pairs for q in (qm, qb)))


def memory_tokens(t: pd.DataFrame, structure: str = "parallel", table: str = "memory") -> Finding:
    """Does shared memory spend fewer tokens per step than broadcast?

    Paper (§5.3, Figs. 10a, 31): shared memory greatly reduces token consumption. Table:
    :func:`.tables.memory_table` (``TokensPerStep``) rows of ``structure``. Wording (one decimal):
    both protocols at 0 tokens (offline policies): "... so the paper's token saving cannot be
    checked here" (shown None); shown when shared memory spends fewer tokens at every team size:
    "..., as in the paper"; otherwise "not fewer ...; <backend> does not show ...".
    """
    claim = "§5.3, Figs. 10a, 31: shared memory spends fewer tokens than broadcast"
    where = {"structure": structure}
    b = _backend(t, where)
    pairs = _pairs(t, table, where, "protocol", "shared_memory", "broadcast", "n_agents", metric="TokensPerStep")
    if not pairs:
        return _missing(b, f"no team size with both shared memory and broadcast on {structure} tasks", claim)
    pairs = [(n, _refmt(qm, "{:.1f}"), _refmt(qb, "{:.1f}")) for n, qm, qb in pairs]
    listing = _join([f"{qm.text} vs {qb.text} with {_agents(n)}" for n, qm, qb in pairs])
    quotes = tuple(q for _, qm, qb in pairs for q in (qm, qb))
    head = f"On {structure} tasks, tokens per step with shared memory vs broadcast are {listing}"
    if all(_v(qm) == 0 and _v(qb) == 0 for _, qm, qb in pairs):
        return Finding(claim, lead(b, f"{head}: {_the(b)} spends no tokens, so the paper's token saving "
                                       "(Figs. 10a, 31) cannot be checked here."), None, quotes)
    off = [n for n, qm, qb in pairs if not _v(qm) < _v(qb)]
    text = (f"{head}: fewer with shared memory at every team size, as in the paper (Figs. 10a, 31)." if not off else
            f"{head}: not fewer with {_join([str(n) for n in off])} agents; {_the(b)} does not show the paper's "
            "token saving here (Figs. 10a, 31).")
    return Finding(claim, lead(b, text), not off, quotes)


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
    b = backend_of(t)
    rows = t[["prior", "budget"]].drop_duplicates().sort_values(["prior", "budget"])
    if not len(rows):
        return _missing(b, "no episodes", claim)
    quotes = [Quote(table, (("prior", p), ("budget", bu)), "budget", float(bu), str(int(bu)), "{:.0f}")
              for p, bu in rows.itertuples(index=False)]
    listing = _join([f"{q.text} for {_prior(dict(q.where)['prior'])}" for q in quotes])
    off = sorted({dict(q.where)["prior"] for q in quotes if expected.get(dict(q.where)["prior"]) != int(q.value)})
    shown = True if not off else None  # overridden budgets: the run is not comparable with the paper
    text = (f"Budgets (total steps over the team): {listing}; " +
            ("the paper's budgets (§3.1, §6.1)." if not off else
             f"not the paper's budgets for {_join([_prior(p) for p in off])} (the budget parameter overrode them; §3.1, §6.1)."))
    return Finding(claim, lead(b, text), shown, tuple(quotes))


def prior_ablation(t: pd.DataFrame, variant: str, n_agents: int = 2, table: str = "priors") -> Finding:
    """How does SR with prior ``variant`` compare with full priors?

    Paper (§6.1, App. D.5, Table 13, Fig. 35; Tables 3, 16): without location priors
    (``no_location``, ``none``) performance drops substantially for every model; with noisy
    locations SR is lower than with clean ones; without appearance the effect is
    model-dependent. Table: :func:`.tables.priors_table` (prior, budget, n_agents). Wording (SR,
    two decimals): for missing or noisy locations shown when SR is below full priors' ("lower, as
    in the paper") else "not lower ...; <backend> does not show ..."; for ``no_appearance`` the
    direction is reported with "the paper finds this model-dependent" (shown None). Missing rows:
    cannot check.
    """
    claim = f"§6.1, Table 13, Fig. 35: SR with {variant} priors vs full priors"
    b = backend_of(t)
    rf = select_rows(t, {"prior": "full", "n_agents": n_agents})
    rv = select_rows(t, {"prior": variant, "n_agents": n_agents})
    if len(rf) != 1 or len(rv) != 1:
        return _missing(b, f"no single row each for full and {_prior(variant)} with {_agents(n_agents)}", claim)
    qf = quote(t, table, {"prior": "full", "budget": rf["budget"].iloc[0], "n_agents": n_agents}, "SR")
    qv = quote(t, table, {"prior": variant, "budget": rv["budget"].iloc[0], "n_agents": n_agents}, "SR")
    if qf is None or qv is None:
        return _missing(b, f"no SR for full or {variant} priors with {_agents(n_agents)}", claim)
    rel = "lower" if _v(qv) < _v(qf) else "higher" if _v(qv) > _v(qf) else "the same"
    body = (f"With {_agents(n_agents)} on parallel tasks, SR is {qv.text} with {_prior(variant)} vs {qf.text} with full "
            f"priors ({rel})")
    if variant == "no_appearance":
        text = f"{body}; the paper finds the effect of appearance model-dependent (Table 13)."
        return Finding(claim, lead(b, text), None, (qv, qf))
    what = "noisy locations" if variant in NOISY else "missing locations"
    ref = "Tables 3, 16" if variant in NOISY else "Table 13, Fig. 35"
    shown = _v(qv) < _v(qf)
    text = (f"{body}: {what} cost SR, as in the paper ({ref})." if shown else
            f"{body}: {what} do not cost SR; {_the(b)} does not show the paper's drop here ({ref}).")
    return Finding(claim, lead(b, text), shown, (qv, qf))


def _gain_quotes(t3: pd.DataFrame, prior: str, table: str) -> tuple[Quote | None, Quote | None, Quote | None]:
    w = {"prior": prior}
    return (quote(t3, table, w, "SR 1 agent"), quote(t3, table, w, "SR 2 agents"),
            quote(t3, table, w, "relative gain", "{:+.1%}"))


def _gain_text(prior: str, q1: Quote, q2: Quote, qg: Quote | None) -> str:
    return f"{_prior(prior)} {q1.text} → {q2.text}" + (f" ({qg.text})" if qg is not None else " (relative gain undefined)")


def gain_under_missing_priors(t3: pd.DataFrame, table: str = "table3") -> Finding:
    """Does a second agent still help without or with noisy location priors?

    Paper (§6.1, Fig. 12, Table 3): two-agent collaboration improves SR when location
    information is missing or noisy (relative gains >= 0 for every model). Table:
    :func:`.tables.table3_long` rows of the priors in :data:`NO_LOCATION` and :data:`NOISY`.
    Wording (SR two decimals, gain one decimal %): shown when 2 agents' SR is above 1 agent's
    under every such prior: "a second agent helps under every ... prior, as in the paper";
    otherwise names the priors where it does not and says <backend> does not show it. None of
    these priors: cannot check.
    """
    claim = "§6.1, Fig. 12, Table 3: a second agent raises SR under missing or noisy priors"
    b = backend_of(t3)
    priors = [p for p in (*NO_LOCATION, *NOISY) if t3 is not None and p in set(t3["prior"])]
    rows = [(p, *_gain_quotes(t3, p, table)) for p in priors]
    rows = [r for r in rows if r[1] is not None and r[2] is not None]
    if not rows:
        return _missing(b, "no 1- and 2-agent episodes with missing or noisy location priors", claim)
    off = [p for p, q1, q2, _ in rows if not _v(q2) > _v(q1)]
    listing = "; ".join(_gain_text(p, q1, q2, qg) for p, q1, q2, qg in rows)
    quotes = tuple(q for r in rows for q in r[1:] if q is not None)
    text = (f"SR of 1 → 2 agents: {listing}: a second agent helps under every missing or noisy prior, as in the "
            "paper (Fig. 12, Table 3)." if not off else
            f"SR of 1 → 2 agents: {listing}: a second agent does not help with {_join([_prior(p) for p in off])}; {_the(b)} does not "
            "show the paper's gain there (Fig. 12, Table 3).")
    return Finding(claim, lead(b, text), not off, quotes)


def largest_gain_prior(t3: pd.DataFrame, table: str = "table3") -> Finding:
    """Is the relative gain of a second agent largest with noisy location priors?

    Paper (§6.1, Table 3): collaboration achieves the largest relative SR gains when the
    information contains noise (W/ Noise above W/o Noise and W/o Loc. for most models). Table:
    :func:`.tables.table3_long` (``relative gain`` per prior; undefined when 1 agent's SR is 0).
    Wording (one decimal %): shown when the largest defined relative gain belongs to a noisy
    prior and is above every other prior's: "largest under <noisy>, as in the paper"; otherwise
    "largest under <prior>, not under noisy priors; <backend> does not show ...". Without a noisy
    prior or without another prior: cannot check.
    """
    claim = "§6.1, Table 3: the relative gain of a second agent is largest with noisy priors"
    b = backend_of(t3)
    if t3 is None:
        return _missing(b, "no 1- and 2-agent episodes", claim)
    gains = {p: q for p in t3["prior"] if (q := quote(t3, table, {"prior": p}, "relative gain", "{:+.1%}")) is not None}
    noisy = [p for p in gains if p in NOISY]
    if not noisy or len(gains) < 2:
        return _missing(b, "no defined relative gain under a noisy prior and another prior", claim)
    order = sorted(gains, key=lambda p: -_v(gains[p]))
    top = order[0]
    shown = top in NOISY and all(_v(gains[top]) > _v(gains[p]) for p in gains if p not in NOISY)
    listing = ", ".join(f"{_prior(p)} {gains[p].text}" for p in order)
    text = (f"Relative SR gain of a second agent by prior: {listing}: " +
            (f"largest with {_prior(top)}, as in the paper (Table 3)." if shown else
             f"not largest with noisy priors; {_the(b)} does not show the paper's largest gain with noise here (Table 3)."))
    return Finding(claim, lead(b, text), shown, tuple(gains[p] for p in order))


# -- §6.2 and appendices E-F: failures, corrections --------------------------------------------------
def false_completions(rates: pd.DataFrame, by: str, table: str = "failures") -> Finding:
    """Are false ("task complete") completions rare but destructive?

    Paper (§6.2, Tables 21-22): a hallucinated completion, broadcast to the team, can stop it
    prematurely; it is rare but highly destructive (SR far lower in episodes with one). Table:
    :func:`.tables.failure_rates` (``indicator == "false_completion"``; the ``"all"`` row and one
    row per group of ``by``). Wording: none found: "No episode had a false completion ..., so ...
    cannot be checked here" (shown None); otherwise the count and share, where it is most frequent,
    and SR with vs without (two decimals): shown when SR with one is lower ("destructive, as in the
    paper") else "not lower ...; <backend> does not show ...".
    """
    claim = "§6.2, Tables 21-22: false completions are destructive"
    sel = select_rows(rates, {"indicator": "false_completion"})
    b = backend_of(sel)
    allw = {by: "all", "indicator": "false_completion"}
    qn, qw = quote(sel, table, allw, "episodes", "{:.0f}"), quote(sel, table, allw, "with", "{:.0f}")
    if qn is None or qw is None:
        return _missing(b, "no episodes", claim)
    if _v(qw) == 0:
        text = (f"No episode had a false completion ({qw.text} of {qn.text} episodes), so the paper's destructive "
                "hallucinated completion (§6.2, Table 22) cannot be checked here.")
        return Finding(claim, lead(b, text), None, (qw, qn))
    qr = quote(sel, table, allw, "rate", "{:.1%}")
    groups = [g for g in sel[by] if g != "all"]
    grates = {g: q for g in groups if (q := quote(sel, table, {by: g, "indicator": "false_completion"}, "rate", "{:.1%}"))}
    best = max((_v(q) for q in grates.values()), default=0.0)
    tops = [g for g in grates if _v(grates[g]) == best]
    top = tops[0] if len(grates) > 1 and len(tops) == 1 else None
    text = f"{qw.text} of {qn.text} episodes ({qr.text}) had a false completion"
    quotes = [qw, qn, qr]
    if top is not None:
        text += f", most often with {by} {top} ({grates[top].text})"
        quotes.append(grates[top])
    qa, qb = quote(sel, table, allw, "SR with"), quote(sel, table, allw, "SR without")
    if qa is None or qb is None:
        return Finding(claim, lead(b, text + "; every episode had one, so SR cannot be compared (§6.2, Table 22)."),
                       None, tuple(quotes))
    shown = _v(qa) < _v(qb)
    text += f"; SR is {qa.text} with one vs {qb.text} without" + (
        ": destructive, as in the paper (§6.2, Table 22)." if shown else
        f": not lower; {_the(b)} does not show the paper's destructive false completions here (§6.2, Table 22).")
    return Finding(claim, lead(b, text), shown, (*quotes, qa, qb))


def _profile_trend(t: pd.DataFrame, where: Mapping[str, Any], column: str, order: Sequence[str], what: str,
                   claim: str, ref: str, table: str, fmt: str, paper: str | None) -> Finding:
    """Is ``column`` rising along the profiles ``order``? ``paper``: what the paper says (for the
    sentence), or None when the paper makes no claim by capability (then ``shown`` is None)."""
    b = _backend(t, where)
    qs = [(p, q) for p in order if (q := quote(t, table, {**where, "profile": p}, column, fmt)) is not None]
    if len(qs) < 2:
        return _missing(b, f"fewer than two profiles with {what}", claim)
    listing = _join([f"{q.text} ({p})" for p, q in qs])
    rising = all(_v(a) < _v(c) for (_, a), (_, c) in zip(qs, qs[1:]))
    head = f"{_cap(what)}: {listing}"
    span = f"from the {qs[0][0]} to the {qs[-1][0]} profile"
    if paper is None:
        text = (f"{head}: {'rising' if rising else 'not rising steadily'} {span} (the paper reports this over all models "
                f"only, with no claim by capability; {ref}).")
        return Finding(claim, lead(b, text), None, tuple(q for _, q in qs))
    text = (f"{head}: rising {span}, in line with the paper: {paper} ({ref})." if rising else
            f"{head}: not rising steadily {span}, so {_the(b)} does not show this pattern here; {paper} ({ref}).")
    return Finding(claim, lead(b, text), rising, tuple(q for _, q in qs))


def wrong_grabs_by_profile(rates: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                           table: str = "failures") -> Finding:
    """Do weaker profiles grab task-irrelevant objects more often?

    Paper (App. D.5, Table 13 discussion; Table 21 "object misidentification"): models with weaker
    fine-grained visual grounding confuse visually similar objects more often. Table:
    :func:`.tables.failure_rates` by ``profile`` (``indicator == "wrong_grab"``, ``rate``).
    Wording (one decimal %): shown when the rate rises strictly along ``order`` (strong to weak):
    "rising ..., in line with the paper"; otherwise "not rising steadily ..., so <backend> does not
    show this pattern here". Fewer than two profiles: cannot check.
    """
    return _profile_trend(rates, {"indicator": "wrong_grab"}, "rate", order,
                          "episodes with a wrong grab", "App. D.5: weaker visual grounding confuses look-alike objects",
                          "App. D.5, Table 21", table, "{:.1%}",
                          "it suggests that weaker fine-grained visual grounding makes models confuse look-alike objects")


def dup_grabs_by_profile(rates: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                         table: str = "failures") -> Finding:
    """Do weaker profiles make more duplicate grabs?

    Paper (§6.2, Fig. 37; App. D.1): duplicate-grab rates differ by model and weaker models are
    more affected by coordination overhead. Table: :func:`.tables.failure_rates` by ``profile``
    (``indicator == "dup_grab"``, ``rate``). Wording as :func:`wrong_grabs_by_profile`.
    """
    return _profile_trend(rates, {"indicator": "dup_grab"}, "rate", order,
                          "episodes with a duplicate grab", "§6.2, Fig. 37: duplicate-grab rates by model",
                          "§6.2, Fig. 37", table, "{:.1%}", None)


def false_completions_by_profile(rates: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                                 table: str = "failures") -> Finding:
    """Do weaker profiles claim a false completion more often?

    Paper (§6.2, Table 22): hallucinated completions come from agents' false beliefs; the paper
    reports them over all models (no per-model claim), so this checks the heuristic's own design
    that weaker profiles believe a premature "task complete" more often. Table:
    :func:`.tables.failure_rates` by ``profile`` (``indicator == "false_completion"``). Wording
    as :func:`wrong_grabs_by_profile`.
    """
    return _profile_trend(rates, {"indicator": "false_completion"}, "rate", order,
                          "episodes with a false completion", "§6.2, Table 22: false completions by capability",
                          "§6.2, Table 22", table, "{:.1%}", None)


def handover_failures_by_profile(t: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                                 table: str = "profiles") -> Finding:
    """Do weaker profiles fail more handovers?

    Paper (Tables 11-12): the weaker Qwen3-8B-VL has a far higher HFR (0.66) than stronger
    models (about 0.3) on sequential tasks. Table: :func:`.tables.metric_table` by
    ``structure`` and ``profile`` (sequential rows, ``HFR``). Wording (two decimals) as
    :func:`wrong_grabs_by_profile`.
    """
    return _profile_trend(t, {"structure": "sequential"}, "HFR", order, "HFR on sequential tasks",
                          "Tables 11-12: weaker models fail more handovers", "Tables 11-12", table, "{:.2f}",
                          "there the weaker Qwen3-8B-VL fails the most handovers")


def coordination_queries(t18: pd.DataFrame, structure: str, table: str = "table18") -> Finding:
    """Do episodes with coordination questions have more objects and lower SR?

    Paper (App. E.2, Table 18): cases with a coordination query involve more objects and have
    lower SR (and more stuck and negative reports): queries react to genuine difficulty. Table:
    :func:`collablab.analysis.coord_query_table` reset to columns (``structure``, ``Q.``,
    ``Avg. #Obj.``, ``SR (%)``). Wording (SR one decimal %, objects two decimals): shown when
    episodes with a query have lower SR and more objects: "..., as in the paper"; otherwise "...;
    <backend> does not show ...". No episode with or without a query: cannot check.
    """
    claim = "App. E.2, Table 18: coordination queries come with more objects and lower SR"
    b = _backend(t18, {"structure": structure})
    w, wo = {"structure": structure, "Q.": "w/ Q."}, {"structure": structure, "Q.": "w/o Q."}
    sw, so = quote(t18, table, w, "SR (%)", "{:.1f}%"), quote(t18, table, wo, "SR (%)", "{:.1f}%")
    ow, oo = quote(t18, table, w, "Avg. #Obj."), quote(t18, table, wo, "Avg. #Obj.")
    if sw is None or so is None or ow is None or oo is None:
        return _missing(b, f"{structure} episodes only with or only without a coordination query", claim)
    shown = _v(sw) < _v(so) and _v(ow) > _v(oo)
    body = (f"On {structure} tasks, episodes with a coordination query have SR {sw.text} and {ow.text} objects on "
            f"average vs {so.text} and {oo.text} without")
    text = (f"{body}: queries come with harder episodes, as in the paper (Table 18)." if shown else
            f"{body}: not both lower SR and more objects; {_the(b)} does not show the paper's pattern here (Table 18).")
    return Finding(claim, lead(b, text), shown, (sw, ow, so, oo))


def correction_effect(t19: pd.DataFrame, group: str, table: str = "table19") -> Finding:
    """After stratifying by the number of wrong grabs, does correction raise SR and CR?

    Paper (App. E.2, Tables 19-20): raw comparisons make correction look harmful for SR, but after
    severity adjustment correction improves both SR and CR in both task types. Table:
    ``CorrectionAnalysis.table19`` reset to columns (``group``, ``cond``, ``row``, ``SR (%)``,
    ``CR (%)``). Wording (one decimal pp): shown when the adjusted ΔSR and ΔCR are both positive:
    "..., as in the paper"; otherwise "...; <backend> does not show ...". No adjusted effect (too
    few wrong-grab episodes with and without correction): cannot check.
    """
    claim = "App. E.2, Tables 19-20: severity-adjusted, correction raises SR and CR"
    b = _backend(t19, {"group": group})
    adj = {"group": group, "cond": "WG", "row": "Adj. Δ"}
    raw = {"group": group, "cond": "WG", "row": "Raw Δ"}
    qs, qc = quote(t19, table, adj, "SR (%)", "{:+.1f} pp"), quote(t19, table, adj, "CR (%)", "{:+.1f} pp")
    rs = quote(t19, table, raw, "SR (%)", "{:+.1f} pp")
    if qs is None or qc is None:
        return _missing(b, f"too few {group} episodes with a wrong grab, with and without correction, for the adjusted effect", claim)
    shown = _v(qs) > 0 and _v(qc) > 0
    body = f"On {group} tasks with a wrong grab, correction changes SR by {qs.text} and CR by {qc.text} after severity adjustment"
    if rs is not None:
        body += f" (raw SR difference {rs.text})"
    text = (f"{body}: correction helps, as in the paper (Tables 19-20)." if shown else
            f"{body}: not a gain in both; {_the(b)} does not show the paper's adjusted benefit of correction here (Tables 19-20).")
    return Finding(claim, lead(b, text), shown, tuple(q for q in (qs, qc, rs) if q is not None))


def self_correction_by_profile(t: pd.DataFrame, order: Sequence[str] = ("strong", "medium", "weak"),
                               table: str = "corrections") -> Finding:
    """Are self-corrections triggered by wrong grabs, for every profile?

    Paper (App. E.2, Table 19; Table 17 "self-correction"): correction is mainly triggered by
    execution errors (episodes with correction have far more wrong grabs). Table:
    :func:`.tables.correction_rates` by ``profile`` (share of episodes with a self-correction
    among those with and without a wrong grab). Wording (one decimal %): shown when, for every
    profile with both kinds of episode, the share is higher with a wrong grab: "..., as in the
    paper"; otherwise names the profiles where it is not and says <backend> does not show it. No
    profile with both: cannot check.
    """
    claim = "App. E.2, Table 19: self-corrections follow wrong grabs"
    b = backend_of(t)
    rows = []
    for p in order:
        qa = quote(t, table, {"profile": p, "wrong_grab": True}, "rate", "{:.1%}")
        qb = quote(t, table, {"profile": p, "wrong_grab": False}, "rate", "{:.1%}")
        if qa is not None and qb is not None:
            rows.append((p, qa, qb))
    if not rows:
        return _missing(b, "no profile with episodes both with and without a wrong grab", claim)
    off = [p for p, qa, qb in rows if not _v(qa) > _v(qb)]
    listing = "; ".join(f"{p} {qa.text} vs {qb.text}" for p, qa, qb in rows)
    head = f"Episodes with a self-correction, with vs without a wrong grab: {listing}"
    text = (f"{head}: self-corrections follow wrong grabs for every profile, as in the paper (Table 19)." if not off else
            f"{head}: not more often after a wrong grab for {_join(off)}; {_the(b)} does not show the paper's "
            "error-triggered correction there (Table 19).")
    return Finding(claim, lead(b, text), not off, tuple(q for _, qa, qb in rows for q in (qa, qb)))


__all__ = [
    "NOISY", "NO_LOCATION", "Finding", "Quote", "Report", "backend_of", "budgets_used", "communication_by_structure",
    "communication_gap_widens", "communication_helps", "coordination_queries", "correction_effect",
    "dup_grabs_by_profile", "false_completions", "false_completions_by_profile", "gain_under_missing_priors",
    "handover_failures_by_profile", "handover_failures_without_communication", "inverted_u", "largest_gain_prior",
    "leader_scaling", "memory_tokens", "mixed_leader", "objects_decline", "objects_robust", "prior_ablation",
    "protocol_ranking", "quote", "second_agent_gain", "self_correction_by_profile", "shared_memory_progress",
    "shared_memory_vs_broadcast", "wrong_grabs_by_profile",
]
