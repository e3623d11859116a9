"""The indexed ``DeleteEdges`` (collablab.world.vh_changers) leaves exactly the state VirtualHome's
own leaves: the same removed and added edges, in the same insertion order, on generated apartments
and (when ../shared/data is present) a real VirtualHome scene, after random edits of the state."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from conftest import shared_path

from collablab.world import vh
from collablab.world.apartments import make_apartment
from collablab.world.vh_changers import indexed_delete_edges

EG = vh.load()
ENV = EG.environment
R = ENV.Relation
RELATIONS = [R.ON, R.INSIDE, R.CLOSE, R.FACING, R.HOLDS_LH, R.HOLDS_RH, R.BETWEEN]


def snapshot(state: Any) -> tuple[Any, ...]:
    """Everything DeleteEdges can change, with dict and set insertion order."""
    return ([(k, list(v)) for k, v in state._removed_edges_from.items()],
            [(k, list(v)) for k, v in state._new_edges_from.items()],
            list(state._new_nodes), state.to_dict())


def edited_state(graph_dict: dict[str, Any], seed: int) -> Any:
    """A state after random added edges, deleted base edges, changed nodes and reads (VirtualHome's
    ``get_node_ids_from`` writes base ids into the added-edge sets it reads)."""
    rng = random.Random(seed)
    state = ENV.EnvironmentState(ENV.EnvironmentGraph(graph_dict), {}, instance_selection=True)
    ids = sorted(n["id"] for n in graph_dict["nodes"])
    edges = graph_dict["edges"]
    for _ in range(60):
        a, b = (state.get_node(rng.choice(ids)) for _ in range(2))
        state.add_edge(a, rng.choice(RELATIONS), b)
    for e in rng.sample(edges, min(40, len(edges))):
        state.delete_edge(state.get_node(e["from_id"]), R[e["relation_type"].upper()], state.get_node(e["to_id"]))
    for nid in rng.sample(ids, 10):
        state.change_node(state.get_node(nid).copy())
    for nid in rng.sample(ids, 30):
        state.get_node_ids_from(nid, rng.choice(RELATIONS))
    return state


def busiest(graph_dict: dict[str, Any], k: int) -> list[int]:
    """The ``k`` nodes with most edges (rooms, furniture, characters): where deletion matters."""
    deg: dict[int, int] = {}
    for e in graph_dict["edges"]:
        for end in (e["from_id"], e["to_id"]):
            deg[end] = deg.get(end, 0) + 1
    return sorted(deg, key=lambda n: (-deg[n], n))[:k]


def check_equal(graph_dict: dict[str, Any], seed: int) -> tuple[int, int]:
    """Both changers from the same states; returns how many delete_edge calls each made."""
    fast_cls = indexed_delete_edges(ENV)
    calls = {"orig": 0, "fast": 0}
    rng = random.Random(seed)
    base = edited_state(graph_dict, seed)
    for nid in busiest(graph_dict, 6) + rng.sample(sorted(n.id for n in base.get_nodes()), 4):
        for reverse in (False, True):
            rels = rng.sample(RELATIONS, rng.randint(1, 4))
            states = {}
            for name, cls in (("orig", ENV.DeleteEdges), ("fast", fast_cls)):
                st = base.change_state([])  # a deep copy over the same base graph
                counted = st.delete_edge

                def delete_edge(*args: Any, _f: Any = counted, _n: str = name) -> None:
                    calls[_n] += 1
                    _f(*args)

                st.delete_edge = delete_edge
                cls(ENV.NodeInstance(st.get_node(nid)), rels, ENV.AnyNode(), delete_reverse=reverse).apply_changes(st)
                del st.delete_edge
                states[name] = st
            assert snapshot(states["fast"]) == snapshot(states["orig"]), (nid, rels, reverse)
    return calls["orig"], calls["fast"]


def apartment_graph(index: int) -> dict[str, Any]:
    return make_apartment(index, seed=0).copy_graph()


@pytest.mark.parametrize("index", [0, 3, 6])
def test_same_state_as_virtualhomes_delete_edges_on_generated_apartments(index):
    orig, fast = check_equal(apartment_graph(index), seed=index)
    assert fast < orig / 10  # the point of it: only the calls that delete something


def test_same_state_on_a_real_virtualhome_scene():
    graph = json.loads(shared_path("virtualhome", "example_graphs", "TestScene1_graph.json").read_text())
    orig, fast = check_equal(graph, seed=1)
    assert fast < orig / 10


def test_other_enumerators_take_virtualhomes_own_code():
    graph = apartment_graph(1)
    a, b = busiest(graph, 2)
    fast_cls = indexed_delete_edges(ENV)
    states = []
    for cls in (ENV.DeleteEdges, fast_cls):
        st = edited_state(graph, seed=5)
        cls(ENV.NodeInstance(st.get_node(a)), RELATIONS, ENV.NodeInstance(st.get_node(b)),
            delete_reverse=True).apply_changes(st)
        states.append(snapshot(st))
    assert states[0] == states[1]


def test_only_our_private_executor_uses_it():
    assert EG.execution.DeleteEdges.__name__ == "IndexedDeleteEdges"
    assert issubclass(EG.execution.DeleteEdges, ENV.DeleteEdges) and ENV.DeleteEdges.__name__ == "DeleteEdges"
