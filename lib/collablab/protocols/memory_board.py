"""How one step's agents read and write the shared memory (mecobench.txt appendix C.2, Fig. 24
orange and Fig. 29), and how simultaneous writes merge.

The paper says "Every agent reads and writes to this SAME memory object", "Read shared memory
before acting to avoid redundant exploration and action conflicts", and writes the act policy as
``a_t^i = pi_i(O_t^i, C_t, h_{a,t}^i, M_t, G, I, A)`` (§3, Eq. 1): every agent i acts on the same
``M_t``, the memory of step t, with no agent index on it; "the selected actions are executed in
simulator ... Finally, the feedback is used to update the history and memory" (§3), and actions
execute at the same time, a conflict going to a random winner (B.3 "Conflict resolution"). So the
default, ``"simultaneous"``, gives every agent the memory as it stood at the start of the step and
merges the writes after everyone acted: agent 1 does not see agent 0's same-step claim, just as
it does not see agent 0's same-step action. ``"sequential"`` (the earlier behaviour) lets agents
write in index order into the one live object, so a later agent reads an earlier one's claims.

Merging (decided here, the paper is silent; :func:`merge_writes`): each agent's write is compared
with the step's starting memory and its changes are applied in agent index order:

- a key an agent added or changed takes its value (two agents changing the same leaf: the higher
  index, applied last, wins); a key an agent left out of its write is deleted ("Memory represents
  the current belief state"), a left-out block or list counting as emptied of what the agent may
  remove;
- lists merge as sets of items: items any agent removed go, items any agent added are appended
  (starting order first, then each agent's additions in index order, no duplicates);
- what belongs to one agent takes only that agent's changes ("Do not update or guess another
  agent's status, holdings, or completed actions"): the entries of ``global.agent_locations``,
  ``agent_plans``, ``agent_status``, ``agent_holding`` named after an agent, and the ``claims``
  whose ``agent`` names one. Two agents claiming one object in the same step both keep their claim
  (each reads the other's next step, as the world resolves a same-step grab by B.3's rule).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Mapping, Sequence

#: How agents write the shared memory within one step.
MEMORY_WRITES = ("simultaneous", "sequential")
#: ``global`` entries keyed by agent name: each agent writes only its own entry (Fig. 29).
PER_AGENT_MAPS = ("agent_locations", "agent_plans", "agent_status", "agent_holding")
_AGENT = re.compile(r"^\s*(?:agent[\s_-]*)?(\d+)\s*$", re.I)
_MISSING = object()


def owner_of(name: Any) -> int | None:
    """The agent a name refers to (``"Agent 1"``, ``"agent_1"``, ``"1"`` or ``1``), else None."""
    if isinstance(name, bool):
        return None
    if isinstance(name, int):
        return name
    m = _AGENT.match(name) if isinstance(name, str) else None
    return int(m.group(1)) if m else None


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)


def _merge_list(base: list[Any], writes: Sequence[tuple[int, Any]], owned: bool) -> list[Any]:
    """Set-wise merge of list items; with ``owned`` an item whose ``agent`` names an agent takes
    only that agent's additions and removals."""
    def may(writer: int, item: Any) -> bool:
        who = owner_of(item.get("agent")) if owned and isinstance(item, dict) else None
        return who is None or who == writer

    start = {_key(x): x for x in base}
    out = dict(start)
    for writer, value in writes:  # each write's changes against the step's start, not each other
        have = {_key(x) for x in value}
        for k in [k for k, x in start.items() if k not in have and may(writer, x)]:
            out.pop(k, None)
        for x in value:
            if _key(x) not in start and may(writer, x):
                out.setdefault(_key(x), x)
    return list(out.values())


def _same(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    return _key(a) == _key(b)


def _merge(base: Any, writes: Sequence[tuple[int, Any]], path: tuple[str, ...]) -> Any:
    """``base`` with every ``(agent, value)`` write's changes applied in agent order; ``_MISSING``
    stands for an absent key (in ``base``: new; in a write: deleted)."""
    changes = [(a, v) for a, v in writes if not _same(v, base)]
    if not changes:
        return base
    values = [v for _, v in changes if v is not _MISSING]
    deleted = len(values) < len(changes)
    for kind in (dict, list):  # containers merge part by part; a deleted one counts as emptied
        if (base is _MISSING or isinstance(base, kind)) and all(isinstance(v, kind) for v in values) \
                and (values or isinstance(base, kind)):
            start = kind() if base is _MISSING else base
            subs = [(a, kind() if v is _MISSING else v) for a, v in changes]
            out = _merge_dict(start, subs, path) if kind is dict else \
                _merge_list(start, subs, owned=path == ("global", "claims"))
            return _MISSING if deleted and not out else out
    return changes[-1][1]  # a leaf (or a changed type): the last change in agent order stands


def _merge_dict(base: dict[str, Any], writes: Sequence[tuple[int, dict[str, Any]]],
                path: tuple[str, ...]) -> dict[str, Any]:
    per_agent = len(path) == 2 and path[0] == "global" and path[1] in PER_AGENT_MAPS
    keys = list(base) + [k for _, v in writes for k in v if k not in base]
    out: dict[str, Any] = {}
    for k in dict.fromkeys(keys):
        sub = [(a, v.get(k, _MISSING)) for a, v in writes]
        if per_agent and owner_of(k) is not None:
            sub = [(a, v) for a, v in sub if a == owner_of(k)]
        got = _merge(base.get(k, _MISSING), sub, (*path, str(k)))
        if got is not _MISSING:
            out[k] = got
    return out


def merge_writes(base: Mapping[str, Any], writes: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """The shared memory after one step: ``base`` (the memory at the step's start) with each
    agent's written memory merged in agent index order (rules in the module doc)."""
    return _merge_dict(dict(base), [(a, dict(writes[a])) for a in sorted(writes)], ())


class MemoryBoard:
    """One step of the shared memory: :meth:`view` is what agent ``a`` reads and writes into,
    :meth:`commit` settles the step's writes into the team's memory object."""

    def __init__(self, memory: dict[str, Any], writes: str = "simultaneous") -> None:
        # ``writes`` is one of MEMORY_WRITES: SharedMemory, the board's only maker, checks it
        self.memory = memory
        self.writes = writes
        self.start = copy.deepcopy(memory) if writes == "simultaneous" else None
        self.copies: dict[int, dict[str, Any]] = {}

    def view(self, agent: int) -> dict[str, Any]:
        """Sequential: the live object itself (earlier agents' writes included). Simultaneous: the
        agent's own copy of the step's starting memory."""
        if self.start is None:
            return self.memory
        self.copies[agent] = copy.deepcopy(self.start)
        return self.copies[agent]

    def commit(self) -> None:
        """Simultaneous: merge every agent's copy into the team's memory (in place)."""
        if self.start is None:
            return
        merged = merge_writes(self.start, self.copies)
        self.memory.clear()
        self.memory.update(merged)
