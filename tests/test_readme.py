"""The README's quick start stays true: the bootstrap subcommands it names exist, the notebook it
says to open is the one ``collablab run`` writes for notebook 01 on the default parameters, every
relative link of README.md and docs/*.md resolves, and the generated blocks (gallery, timings) have
their markers. Also the gallery script and the timings writer on small inputs. Fast (no notebook runs)."""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BOOTSTRAP = ROOT / "scripts" / "bootstrap.sh"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
# a 1x1 PNG
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def _strip_code(text: str) -> str:
    """The markdown without fenced code blocks and inline code spans (links there are examples)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _targets(text: str) -> list[str]:
    """Link targets of markdown links and HTML src/href attributes."""
    body = _strip_code(text)
    return re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", body) + re.findall(r"(?:src|href)=\"([^\"]+)\"", body)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(text: str) -> set[str]:
    plain = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", plain, flags=re.M)}


def _subcommands() -> set[str]:
    """The subcommands of scripts/bootstrap.sh's case statement."""
    text = BOOTSTRAP.read_text()
    case = text[text.index('case "${1:-}" in'):]
    return set(re.findall(r"^  ([a-z-]+)\)$", case, flags=re.M))


def test_bootstrap_subcommands_named_in_readme_exist():
    named = set(re.findall(r"bash scripts/bootstrap\.sh ([a-z-]+)", README.read_text()))
    assert {"run", "test", "lab"} <= named, named
    assert named <= _subcommands(), f"README names {sorted(named - _subcommands())}, bootstrap.sh has none"
    # CI runs the README's test command
    assert "bootstrap.sh test" in (ROOT / ".ci" / "run").read_text()


def test_bootstrap_run_installs_runtime_only_and_test_the_extras():
    text = BOOTSTRAP.read_text()
    case = text[text.index('case "${1:-}" in'):]
    run = case[case.index("  run)"):case.index(";;")]
    assert re.search(r"^\s*setup\s*$", run, flags=re.M), run
    test = case[case.index("  test)"):]
    assert 'setup "[test]"' in test[:test.index(";;")]
    result = subprocess.run(["bash", "-n", str(BOOTSTRAP)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_readme_notebook_path_is_what_collablab_run_writes(monkeypatch):
    from collablab import cli

    monkeypatch.delenv("COLLABLAB_OUTPUTS", raising=False)
    (point,) = cli.plan_points(cli.parser().parse_args(["run", "01"]))
    rel = point.out.resolve().relative_to(ROOT).as_posix()
    assert rel == "outputs/notebooks/default/01_collaboration.ipynb"
    assert f"open the executed first notebook, `{rel}`" in " ".join(README.read_text().split())
    assert f"LAB_DEFAULT={rel}" in BOOTSTRAP.read_text()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(doc):
    text = doc.read_text()
    shared = (ROOT.parent / "shared").is_dir()
    bad = []
    for target in _targets(text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        if not path:
            if doc == README and anchor not in _anchors(text):
                bad.append(target)
            continue
        file = (doc.parent / path).resolve()
        if not file.is_relative_to(ROOT) and not shared:
            continue  # ../shared/ sits beside the checkout here, not in a fresh clone
        if not file.exists():
            bad.append(target)
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text()):
            bad.append(target)
    assert not bad, f"{doc.name}: links that do not resolve: {bad}"


def test_generated_blocks_have_their_markers():
    text = README.read_text()
    for name in ("gallery", "timings"):
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        assert text.count(start) == 1 and text.count(end) == 1, name
        assert text.index(start) < text.index(end), name
    assert "docs/household.md" in text
    assert "household.md" in (ROOT / "docs" / "architecture.md").read_text()


def _notebook(path: Path, title: str, cells: list[dict], failed: bool = False) -> None:
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": [f"# {title}\n"]}, *cells],
          "metadata": {"papermill": {"exception": failed or None}}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))


def _code(png: bytes | None, tags: list[str] | None = None) -> dict:
    outputs = [{"output_type": "display_data", "metadata": {},
                "data": {"image/png": base64.b64encode(png).decode()}}] if png else []
    return {"cell_type": "code", "execution_count": 1, "metadata": {"tags": tags or []}, "outputs": outputs,
            "source": ""}


def test_gallery_script(tmp_path):
    script = ROOT / "scripts" / "gallery.py"
    run_dir, out = tmp_path / "run", tmp_path / "docs" / "gallery"
    run_dir.mkdir()
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n<!-- gallery:start -->\nstale\n<!-- gallery:end -->\n\nrest\n")

    def gallery() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(script), str(run_dir), "--readme", str(readme), "--out", str(out)],
                              capture_output=True, text=True)

    empty = gallery()
    assert empty.returncode == 2 and len(empty.stderr.strip().splitlines()) == 1, empty.stderr
    other = PNG + b"tagged"  # not a real image, told apart by its bytes
    _notebook(run_dir / "01_a.ipynb", "01 — First", [_code(PNG), _code(other, ["gallery"])])
    _notebook(run_dir / "02_b.ipynb", "02 — Second", [_code(None), _code(PNG)])
    _notebook(run_dir / "03_c.ipynb", "03 — Failed", [_code(PNG)], failed=True)
    first = gallery()
    assert first.returncode == 0, first.stderr
    assert (out / "01_a.png").read_bytes() == other      # the tagged cell wins
    assert (out / "02_b.png").read_bytes() == PNG        # else the first PNG
    assert not (out / "03_c.png").exists()                # a notebook that stopped with an error: none
    text = readme.read_text()
    assert "docs/gallery/01_a.png" in text and "01 — First" in text and "stale" not in text and "rest" in text
    assert gallery().returncode == 0 and readme.read_text() == text   # idempotent


def test_timings_writer(tmp_path):
    spec = importlib.util.spec_from_file_location("notebook_suite", ROOT / "benchmarks" / "notebook_suite.py")
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- timings:start -->\nstale table\n<!-- timings:end -->\nb\n")
    block = suite.readme_table(["01_x", "02_y"], ["default", "smoke"],
                               {"01_x": {"default": 30.2, "smoke": 10.0}, "02_y": {"default": 40.0, "smoke": 9.6}})
    suite.write_readme(readme, block)
    text = readme.read_text()
    assert "| `01_x` | 30 s | 10 s |" in text and "70 s" in text and "stale table" not in text
    assert "benchmarks/notebook_suite.py --readme" in text and text.endswith("<!-- timings:end -->\nb\n")
