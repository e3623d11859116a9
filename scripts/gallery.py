"""One figure per executed notebook, for the README's gallery.

Reads the executed notebooks ``NN_*.ipynb`` of a run folder (default ``outputs/notebooks/default/``,
what ``collablab run`` writes on the default parameters), takes one figure from each (the first PNG
output of the code cell tagged ``gallery`` in its metadata; with no such cell, the first PNG output
of the notebook), writes it to ``docs/gallery/<notebook stem>.png`` and rewrites the part of
README.md between ``<!-- gallery:start -->`` and ``<!-- gallery:end -->`` as a table of the images,
each captioned with the notebook's title (its first ``# `` heading). A notebook that stopped with an
error is left out. Running it twice gives the same files. Exit 2 with one line when the run folder has no executed notebook or README.md has no markers.

    .venv/bin/python scripts/gallery.py [RUN_FOLDER] [--readme README.md] [--out docs/gallery] [--columns 2]
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- gallery:start -->", "<!-- gallery:end -->"


def title_of(nb: dict, stem: str) -> str:
    """The notebook's title: its first markdown heading of level 1, else its file name."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        for line in "".join(cell.get("source", "")).splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return stem


def _pngs(cell: dict) -> list[str]:
    return [out["data"]["image/png"] for out in cell.get("outputs", [])
            if "image/png" in out.get("data", {})]


def figure_of(nb: dict) -> bytes | None:
    """The PNG of the first output of the cell tagged ``gallery``, else of the first PNG in the notebook."""
    code = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    tagged = [c for c in code if "gallery" in (c.get("metadata", {}).get("tags") or [])]
    for cell in tagged + code:
        pngs = _pngs(cell)
        if pngs:
            data = pngs[0]
            return base64.b64decode("".join(data) if isinstance(data, list) else data)
    return None


def executed_notebooks(run_dir: Path) -> list[Path]:
    """``NN_*.ipynb`` files of ``run_dir`` that have been executed (a code cell with an execution
    count) without an error (papermill marks a failed run in the notebook's metadata)."""
    out = []
    for path in sorted(run_dir.glob("[0-9][0-9]_*.ipynb")):
        try:
            nb = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not any(c.get("cell_type") == "code" and c.get("execution_count") for c in nb.get("cells", [])):
            continue
        if nb.get("metadata", {}).get("papermill", {}).get("exception"):
            print(f"note: {path.name} stopped with an error; left out of the gallery", file=sys.stderr)
            continue
        out.append(path)
    return out


def gallery_table(entries: list[tuple[str, str, str]], columns: int) -> str:
    """An HTML table of images, ``columns`` per row, each with its caption under it; entries are
    (image path, caption, notebook stem)."""
    lines = ["<table>"]
    for i in range(0, len(entries), columns):
        lines.append("<tr>")
        for img, cap, stem in entries[i:i + columns]:
            lines.append(f'<td width="{100 // columns}%"><a href="{img}"><img src="{img}" alt="{html.escape(stem)}"></a>'
                         f"<br>{html.escape(cap)}</td>")
        lines.append("</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def rewrite(readme: Path, block: str) -> bool:
    """Put ``block`` between the gallery markers of ``readme``; True when the file changed."""
    text = readme.read_text()
    if START not in text or END not in text or text.index(START) > text.index(END):
        raise SystemExit(f"error: {readme} has no {START} ... {END} markers")
    new = re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: f"{START}\n{block}\n{END}", text,
                 count=1, flags=re.S)
    if new != text:
        readme.write_text(new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", nargs="?", default=str(ROOT / "outputs" / "notebooks" / "default"))
    ap.add_argument("--readme", default=str(ROOT / "README.md"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "gallery"))
    ap.add_argument("--columns", type=int, default=2)
    args = ap.parse_args(argv)
    run_dir, out, readme = Path(args.run_dir), Path(args.out), Path(args.readme)
    notebooks = executed_notebooks(run_dir)
    if not notebooks:
        print(f"error: no executed notebooks NN_*.ipynb in {run_dir} (run `.venv/bin/collablab run` first)",
              file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for path in notebooks:
        nb = json.loads(path.read_text())
        png = figure_of(nb)
        if png is None:
            print(f"note: {path.name} has no PNG output; left out of the gallery", file=sys.stderr)
            continue
        target = out / f"{path.stem}.png"
        if not target.is_file() or target.read_bytes() != png:
            target.write_bytes(png)
        rel = Path(*target.resolve().relative_to(readme.resolve().parent).parts).as_posix() \
            if target.resolve().is_relative_to(readme.resolve().parent) else str(target)
        entries.append((rel, title_of(nb, path.stem), path.stem))
    changed = rewrite(readme, gallery_table(entries, args.columns))
    print(f"gallery: {len(entries)} figures from {run_dir} -> {out}; {readme.name} "
          f"{'rewritten' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
