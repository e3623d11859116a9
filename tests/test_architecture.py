"""The house stays a house: every module's imports (read with ``ast``, lazy and TYPE_CHECKING
ones included) form no cycle, shared floors never import a study, a study imports only shared
floors, nothing imports a notebook helper, and no private name crosses a module boundary."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "lib" / "collablab"
#: What each top-level part may import of collablab (besides itself).
ALLOWED: dict[str, set[str]] = {
    "llm": set(),
    "runs": {"llm"},
    "analysis": set(),
    "world": set(),
    "agents": {"world", "llm"},
    "protocols": {"agents", "world"},
    "studies": {"llm", "runs", "analysis", "world", "agents", "protocols"},
    "testing": {"llm", "runs", "world", "agents", "protocols"},
    "notebooks": set(),
    "cli": {"runs"},
    "__init__": set(),
}
TOPS = {"notebooks", "cli", "testing"}  # helpers that nothing in the package imports


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_package(mod: str) -> bool:
    return MODULES.get(mod, Path("x.py")).name == "__init__.py"


def imports(mod: str) -> list[tuple[str, list[str], int]]:
    """``(imported module, names, line)`` for every import statement of ``mod``."""
    tree = ast.parse(MODULES[mod].read_text(encoding="utf-8"))
    base = mod if _is_package(mod) else mod.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.startswith("collablab")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                target = ".".join(parts + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("collablab"):
                names = [a.name for a in node.names]
                subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
                out += [(s, [], node.lineno) for s in subs]
                rest = [n for n in names if f"{target}.{n}" not in MODULES]
                if rest or not subs:
                    out.append((target, rest, node.lineno))
    return out


def part(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def graph() -> dict[str, set[str]]:
    return {m: {t for t, _, _ in imports(m) if t in MODULES and t != m} for m in MODULES}


def test_every_module_is_seen():
    assert "collablab.studies.mecobench.episode" in MODULES and "collablab.protocols.team" in MODULES
    assert len(MODULES) > 60


def cycles_of(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return cycles


def violations(edges: dict[str, list[tuple[str, list[str], int]]]) -> list[str]:
    """Imports that break the floor rules."""
    bad = []
    for mod, imps in edges.items():
        me = part(mod)
        for target, _, line in imps:
            other = part(target)
            if other == me and me != "studies":
                continue
            if me == "studies" and other == "studies":
                mine, theirs = mod.split(".")[2:3], target.split(".")[2:3]
                if mine and theirs and mine != theirs:
                    bad.append(f"{mod}:{line} imports another study {target}")
                continue
            if other in TOPS:
                bad.append(f"{mod}:{line} imports the helper {target}")
            elif other not in ALLOWED.get(me, set()) | {"__init__"} and other != me:
                bad.append(f"{mod}:{line} ({me}) may not import {target} ({other})")
    return bad


def test_no_import_cycle():
    found = cycles_of(graph())
    assert not found, f"import cycles: {found}"


def test_floors_and_studies_import_only_what_they_may():
    bad = violations({m: imports(m) for m in MODULES})
    assert not bad, "\n".join(bad)


def test_no_private_name_crosses_a_module():
    bad = []
    for mod in MODULES:
        for target, names, line in imports(mod):
            bad += [f"{mod}:{line} imports {target}.{n}" for n in names if n.startswith("_") and target != mod]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_every_module_says_what_it_is_for(mod):
    doc = ast.get_docstring(ast.parse(MODULES[mod].read_text(encoding="utf-8")))
    assert doc and len(doc.split()) >= 5, f"{mod}: needs a docstring of a sentence or two"


def test_package_faces_declare_all():
    for mod, path in MODULES.items():
        if path.name == "__init__.py" and mod.count(".") >= 1 and mod != "collablab.studies":
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                     if isinstance(t, ast.Name)}
            assert "__all__" in names, f"{mod}: a package face re-exports its public names with __all__"


def test_the_checks_see_planted_faults():
    """The rules above can fail: a planted back-edge, cross-study import and cycle are reported."""
    planted = {"collablab.world.household": [("collablab.studies.mecobench.tasks", [], 7)],
               "collablab.studies.other.x": [("collablab.studies.mecobench.tasks", [], 3)],
               "collablab.agents.base": [("collablab.notebooks", [], 9)]}
    assert len(violations(planted)) == 3
    assert cycles_of({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
