"""The executed notebooks read as documents (issue 24): a ``headline`` cell, a ``published`` cell
showing the paper's values beside the run's with a verdict per cell (issue 25), tables that fit a
screen with at most three decimals, no widget and no stderr, at least one figure and none shown
twice, figures no wider than the notebook, no generated sentence over 300 characters and no
finding that starts with the backend label.

The smoke notebooks are executed here (``collablab run --params smoke`` into a temporary outputs
folder); a default run under ``outputs/notebooks/default`` is checked too when present. To check a
folder by hand: ``python tests/test_notebook_reading.py outputs/notebooks/default``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_COLUMNS = 12
MAX_SENTENCE = 300
VERDICTS = ("inside", "above", "below", "no published row", "no interval")
MAX_FIGURE_PX = 1200  # JupyterLab's notebook column at 100 % zoom on a 1,440-px screen
_MANY_DECIMALS = re.compile(r"\d\.\d{4,}")
_BACKEND_LEAD = re.compile(r"^(?:[-*]|\d+\.)\s+\*\*[\w:,.\-/ ]+\*\*:")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"*])")


class _Tables(HTMLParser):
    """Rows of cell texts of every ``<table>`` in an HTML string (colspans counted)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self._cell, self._span = [], int(dict(attrs).get("colspan") or 1)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].extend(["".join(self._cell).strip()] * self._span)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _text(x: str | list[str]) -> str:
    return "".join(x) if isinstance(x, list) else x


def _png_width(b64: str) -> int:
    raw = base64.b64decode(b64)
    return struct.unpack(">I", raw[16:20])[0]


def sentences(markdown: str) -> list[str]:
    """The sentences of a Markdown text (each line, or bullet, split at sentence ends)."""
    out = []
    for line in markdown.splitlines():
        line = line.strip()
        if line:
            out.extend(s for s in _SENTENCE_END.split(line) if s)
    return out


def problems(path: Path) -> list[str]:
    """What keeps the executed notebook at ``path`` from reading as a document (empty when fine)."""
    nb = json.loads(path.read_text())
    found: list[str] = []
    pngs: dict[str, int] = {}
    headline = published = False
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        for out in cell.get("outputs", []):
            where = f"{path.name} cell {i}"
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                found.append(f"{where}: stderr output: {_text(out['text'])[:120]!r}")
            data = out.get("data", {})
            if "application/vnd.jupyter.widget-view+json" in data:
                found.append(f"{where}: widget output")
            if "headline" in tags and ("text/markdown" in data or "text/html" in data):
                headline = True
            if "image/png" in data:
                png = _text(data["image/png"]).strip()
                digest = hashlib.sha1(png.encode()).hexdigest()
                if digest in pngs:
                    found.append(f"{where}: the figure of cell {pngs[digest]} again")
                pngs[digest] = i
                if (w := _png_width(png)) > MAX_FIGURE_PX:
                    found.append(f"{where}: figure {w} px wide (> {MAX_FIGURE_PX})")
            if "text/html" in data:
                parser = _Tables()
                parser.feed(_text(data["text/html"]))
                if "published" in tags:
                    published = published or any(
                        rows and "verdict" in rows[0] and any(set(r) & set(VERDICTS) for r in rows[1:])
                        for rows in parser.tables)
                for rows in parser.tables:
                    width = max((len(r) for r in rows), default=0)
                    if width > MAX_COLUMNS:
                        found.append(f"{where}: table with {width} columns (> {MAX_COLUMNS})")
                    cells = [c for r in rows for c in r if _MANY_DECIMALS.search(c)]
                    if cells:
                        found.append(f"{where}: number with more than 3 decimals in a table: {cells[0]!r}")
            if "text/markdown" in data:
                md = _text(data["text/markdown"])
                for s in sentences(md):
                    if len(s) > MAX_SENTENCE:
                        found.append(f"{where}: sentence of {len(s)} characters: {s[:80]!r}...")
                    if _BACKEND_LEAD.match(s):
                        found.append(f"{where}: finding starts with the backend label: {s[:60]!r}")
    if not headline:
        found.append(f"{path.name}: no displayed cell tagged 'headline'")
    if not published:
        found.append(f"{path.name}: no cell tagged 'published' shows a table of the paper's values with verdicts")
    if not pngs:
        found.append(f"{path.name}: no figure")
    return found


def _check(folder: Path) -> None:
    notebooks = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    assert notebooks, f"no executed notebook in {folder}"
    bad = [p for nb in notebooks for p in problems(nb)]
    assert not bad, "\n".join(bad)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("outputs")
    env = {**os.environ, "COLLABLAB_OUTPUTS": str(out)}
    proc = subprocess.run([sys.executable, "-m", "collablab.cli", "run", "--params", "smoke"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out / "notebooks" / "smoke"


@pytest.mark.slow
def test_smoke_notebooks_read_as_documents(smoke_run: Path) -> None:
    _check(smoke_run)


@pytest.mark.slow
def test_compare_prints_every_smoke_run_beside_its_paper(smoke_run: Path) -> None:
    """``collablab compare RUN_DIR`` on the run folder of each smoke notebook (issue 25): exit 0, a
    table of the paper's values with verdicts, every table a calibration or a reference (never a
    reproduction: the smoke run is offline)."""
    runs = sorted(p for p in smoke_run.parent.parent.glob("[0-9][0-9]_*/*") if (p / "manifest.json").exists())
    assert len({p.parent.name for p in runs}) == len(list(smoke_run.glob("[0-9][0-9]_*.ipynb"))), runs
    for run in runs:
        proc = subprocess.run([sys.executable, "-m", "collablab.cli", "compare", str(run)], cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, (run, proc.stderr[-2000:])
        assert "verdict" in proc.stdout and re.search(r"\b(inside|above|below)\b", proc.stdout), (run, proc.stdout)
        kinds = re.findall(r" · (\w+)$", proc.stdout, flags=re.M)  # each table's title ends with its kind
        assert kinds and set(kinds) <= {"calibration", "reference"}, (run, kinds)  # the offline backend


def test_default_run_reads_as_document() -> None:
    folder = ROOT / "outputs" / "notebooks" / "default"
    if not any(folder.glob("[0-9][0-9]_*.ipynb")):
        pytest.skip("no default run under outputs/notebooks/default (bash scripts/bootstrap.sh run makes one)")
    _check(folder)


def test_checks_catch_what_they_name(tmp_path: Path) -> None:
    """Each check fires on a notebook that breaks it and stays quiet on one that does not."""
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + struct.pack(">II", 800, 400) + b"x" * 20).decode()
    wide_png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + struct.pack(">II", 1460, 400)).decode()
    table = "<table><tr>" + "".join(f"<th>c{i}</th>" for i in range(13)) + "</tr><tr><td>80.000000</td></tr></table>"
    long = "A " + "very " * 70 + "long sentence."

    def nb(outputs: list[dict], tags: list[str] = ["headline"]) -> Path:
        cells = [{"cell_type": "code", "metadata": {"tags": tags}, "outputs": outputs, "source": ""}]
        p = tmp_path / f"{len(list(tmp_path.iterdir())):02d}_x.ipynb"
        p.write_text(json.dumps({"cells": cells}))
        return p

    beside = "<table><tr><th>n</th><th>verdict</th></tr><tr><td>1</td><td>inside</td></tr></table>"
    good = nb([{"output_type": "display_data", "data": {"text/markdown": "1. Short. Fine.", "image/png": png}},
               {"output_type": "display_data", "data": {"text/html": beside}}], tags=["headline", "published"])
    assert problems(good) == []
    bad = nb([{"output_type": "stream", "name": "stderr", "text": "warn"},
              {"output_type": "display_data", "data": {"application/vnd.jupyter.widget-view+json": {}}},
              {"output_type": "display_data", "data": {"text/html": table}},
              {"output_type": "display_data", "data": {"text/markdown": f"- **heuristic**: x.\n- {long}"}},
              {"output_type": "display_data", "data": {"image/png": png}},
              {"output_type": "display_data", "data": {"image/png": png}},
              {"output_type": "display_data", "data": {"image/png": wide_png}}], tags=[])
    kinds = " | ".join(problems(bad))
    for what in ("stderr", "widget", "13 columns", "3 decimals", "backend label", "characters", "again",
                 "1460 px", "headline", "published"):
        assert what in kinds, (what, kinds)


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "outputs" / "notebooks" / "default")
    issues = [p for nb in sorted(folder.glob("[0-9][0-9]_*.ipynb")) for p in problems(nb)]
    print("\n".join(issues) or f"{folder}: every notebook reads as a document")
    sys.exit(1 if issues else 0)
