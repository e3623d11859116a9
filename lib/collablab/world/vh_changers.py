"""An indexed ``DeleteEdges`` for VirtualHome's evolving-graph executor: the same state, less work.

The executor detaches a character or an object from "everything" with
``DeleteEdges(<node>, relations, AnyNode(), delete_reverse=True)`` (every walk, every grab, every
put). Its ``apply_changes`` calls ``EnvironmentState.delete_edge`` for every node of the scene,
both ways, for every relation: about 2,400 calls per walk in a 400-node apartment, 43 % of a
MECoBench episode's time (cProfile, 18 episodes of three teams), though only a handful of those
calls find an edge to delete.

:class:`IndexedDeleteEdges` makes exactly the calls that change something, in the same order:

* a call ``delete_edge(a, r, b)`` changes the state only when ``(a, r, b)`` is an edge of the
  base graph or of the state's added edges (``_new_edges_from``); every other call is a no-op
  (it reads two dicts and writes nothing);
* so it enumerates only the nodes at the other end of such an edge (the base graph's edges from
  the node, its reverse index of edges to the node, and the added edges either way), and visits
  them in ``state.get_nodes()`` order, so the removed-edge sets are built by the same sequence of
  insertions as before.

The resulting ``EnvironmentState`` is equal, dict and set insertion order included
(``tests/test_vh_changers.py`` compares both changers on random relations, both directions, added
edges and changed nodes; ``tests/test_record_hashes.py`` replays 25 episodes). Any other
enumerator than ``AnyNode``, or a state of another class, takes the original code.
:func:`collablab.world.vh.load` installs it in our private copy of the executor only.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any
from weakref import WeakKeyDictionary

_Index = tuple[dict[int, int], dict[tuple[int, Any], list[int]]]
#: per base graph (never changed once built): node id -> position, and (to id, relation) -> from ids
_GRAPH_INDEX: WeakKeyDictionary[Any, _Index] = WeakKeyDictionary()


def _graph_index(graph: Any) -> _Index:
    idx = _GRAPH_INDEX.get(graph)
    if idx is None:
        position = {nid: i for i, nid in enumerate(graph._node_map)}
        sources: dict[tuple[int, Any], list[int]] = {}
        for (frm, rel), tos in graph._edge_map.items():
            for to in tos:
                sources.setdefault((to, rel), []).append(frm)
        idx = _GRAPH_INDEX[graph] = (position, sources)
    return idx


def indexed_delete_edges(env: ModuleType) -> type:
    """A subclass of ``env.DeleteEdges`` (``env``: the executor's ``environment`` module)."""

    class IndexedDeleteEdges(env.DeleteEdges):  # type: ignore[name-defined, misc]
        """``DeleteEdges`` that calls ``delete_edge`` only where an edge exists (module docstring)."""

        def apply_changes(self, state: Any, **kwargs: Any) -> None:
            if type(self.to_node) is not env.AnyNode or type(state) is not env.EnvironmentState:
                return super().apply_changes(state, **kwargs)
            graph = state._graph
            graph_position, graph_sources = _graph_index(graph)
            new_nodes, added = state._new_nodes, state._new_edges_from
            n_new = len(new_nodes)
            new_position = {nid: i for i, nid in enumerate(new_nodes)}

            def position(nid: int) -> int:  # the node's place in state.get_nodes()
                if nid in new_position:
                    return new_position[nid]
                return n_new + graph_position[nid]

            for n1 in self.from_node.enumerate(state):
                for rel in self.relations:
                    ends = set(graph._edge_map.get((n1.id, rel), ()))
                    ends.update(added.get((n1.id, rel), ()))
                    if self.delete_reverse:
                        ends.update(graph_sources.get((n1.id, rel), ()))
                        ends.update(frm for (frm, r), tos in added.items() if r == rel and n1.id in tos)
                    live = [nid for nid in ends if nid in new_position or nid in graph_position]
                    for nid in sorted(live, key=position):
                        n2 = state.get_node(nid)
                        state.delete_edge(n1, rel, n2)
                        if self.delete_reverse:
                            state.delete_edge(n2, rel, n1)

    return IndexedDeleteEdges
