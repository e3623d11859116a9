"""A run beside its paper (issue 25): the published rows that match a run's backend and model, the
run's values with their 95% intervals, and a verdict per cell.

A study's ``beside.py`` knows which of its published tables a run can be compared with and how its
episodes make each cell; this module holds what every study shares:

- :func:`paper_model`: a served model id (``Qwen/Qwen3-VL-32B-Instruct``, ``qwen3-vl-32b-instruct-q4_k_m.gguf``)
  read as the name a paper gives it (``Qwen3-VL-32B``), through the study's table of defaults and a
  notebook's ``paper_models`` parameter, which wins;
- :class:`Comparison`: one paper table beside a run, of one of three :data:`KINDS`:
  ``reproduction`` (an LLM run of a model the paper ran), ``calibration`` (the cells an offline
  profile was tuned to match: agreement there is by construction) and ``reference`` (the offline
  backend, or a model the paper did not run, beside a paper model for orientation: never a
  reproduction);
- :class:`Beside`: every comparison of a run, shown in a notebook (``display``), as text (the
  ``collablab compare`` command) and as a figure (:func:`published_plot`).

Verdicts are :data:`~collablab.analysis.published.VERDICTS`: the published value inside the run's
95% interval, above or below it, or no published row for the run's condition.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .findings import OFFLINE_BACKENDS
from .plots import HouseFigure, figure_title
from .present import DisplayTable, TableStyle, number_decimals, fmt_interval, fmt_number, fmt_rate, present
from .published import PublishedTable, beside_published

__all__ = ["KINDS", "Beside", "Comparison", "compare", "is_offline", "normalise_model", "paper_model", "same_model",
           "published_plot"]

#: What a comparison is (see the module docstring).
KINDS = ("reproduction", "calibration", "reference")
_KIND_TEXT = {
    "reproduction": "reproduction",
    "calibration": "calibration (the offline profile was tuned to these cells: agreement is by construction)",
    "reference": "reference only (not a reproduction: the paper did not run this backend)",
}
# Suffixes a served id carries that are not part of the model's name: instruction tuning, quantization,
# file formats, dates. Applied repeatedly from the end.
_SUFFIX = re.compile(r"([-_.:](instruct|chat|it|hf|gguf|awq|gptq|fp8|fp16|bf16|int4|int8|mlx|q\d(_k)?(_[msl0-9])*|"
                     r"\d{4}(-\d\d){0,2}|\d{8}|latest))+$")


def normalise_model(name: str) -> str:
    """``name`` without its organisation, file extension, tuning and quantization suffixes, lower-case,
    with spaces and dots read as ``-``: ``Qwen/Qwen3-VL-32B-Instruct-AWQ`` → ``qwen3-vl-32b``;
    ``meta-llama/Llama-3.1-8B-Instruct`` → ``llama-3-1-8b``."""
    n = name.strip().lower().rsplit("/", 1)[-1]
    n = re.sub(r"\.gguf$", "", n)
    prev = None
    while prev != n:
        prev, n = n, _SUFFIX.sub("", n)
    return re.sub(r"[\s._]+", "-", n).strip("-")


def is_offline(backend: str) -> bool:
    """Whether every backend label in ``backend`` (one label, or several joined by ``,`` or ``/``)
    is an offline one (``heuristic``, ``oracle``, ...: no model answered)."""
    return all(b.split(":")[0].strip() in OFFLINE_BACKENDS for b in re.split(r"[,/]", str(backend)))


def same_model(a: str, b: str) -> bool:
    """Whether two names are one model: the same words after :func:`normalise_model`, in any order (a
    paper may print one model as ``Qwen3-VL-32B`` in one table and ``Qwen3-32B-VL`` in another)."""
    return sorted(normalise_model(a).split("-")) == sorted(normalise_model(b).split("-"))


def paper_model(served: str | None, known: Mapping[str, str], extra: Mapping[str, str] | None = None) -> str | None:
    """The paper's name for the served model ``served``: ``extra`` (a notebook's ``paper_models``)
    first, exactly, then ``known`` (the study's defaults, served id → paper name), exactly, then
    both by :func:`normalise_model`, then a paper name itself (``served`` may already be one); None
    when none matches."""
    if not served:
        return None
    for table in (extra or {}, known):
        if served in table:
            return table[served]
    n = normalise_model(served)
    for table in (extra or {}, known):
        for k, v in table.items():
            if normalise_model(k) == n:
                return v
    for v in {*(extra or {}).values(), *known.values()}:
        if normalise_model(v) == n:
            return v
    return None


@dataclass
class Comparison:
    """One paper table beside a run: ``rows`` has the key columns ``on`` (the conditions, and
    ``metric``), the run's value ``run`` with ``run_low``/``run_high``, the run's units ``n``, the
    ``published`` value (on the run's scale) and a ``verdict``. ``rates`` names the metrics that are
    fractions (shown as %); ``x``/``hue``/``panel`` name the conditions a figure spreads them over."""

    table: PublishedTable
    model: str
    kind: str
    rows: pd.DataFrame
    on: tuple[str, ...]
    rates: frozenset[str] = frozenset()
    why: str = ""
    x: str | None = None
    hue: str | None = None
    panel: str | None = "metric"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind: {self.kind!r} is not allowed; allowed: {', '.join(KINDS)}")

    @property
    def name(self) -> str:
        return f"published_{self.table.name}"

    @property
    def title(self) -> str:
        """``MECoBench Table 9 · Qwen3-VL-32B · reproduction``."""
        return f"{self.table.paper.split(' (')[0]} {self.table.table} · {self.model} · {self.kind}"

    def counts(self) -> dict[str, int]:
        """How many cells got each verdict."""
        return {str(k): int(v) for k, v in self.rows["verdict"].value_counts().items()}

    def summary(self) -> str:
        """One sentence: how many of the paper's cells fall inside the run's intervals."""
        c = self.counts()
        placed = sum(v for k, v in c.items() if k in ("inside", "above", "below"))
        if not placed:
            return (f"{self.table.table}: the paper has no row for {self.model} in any of this run's "
                    f"{len(self.rows)} conditions.")
        parts = [f"{c[k]} {k}" for k in ("above", "below") if c.get(k)]
        tail = f" ({', '.join(parts)} the interval)" if parts else ""
        more = "".join(f"; {c[k]} of the run's cells {what}" for k, what in
                       (("no published row", "have no published row"),
                        ("no interval", "have too few units for an interval")) if c.get(k))
        return (f"{self.table.table}, {self.model} ({self.kind}): the published value lies inside this run's 95% "
                f"interval in {c.get('inside', 0)} of {placed} cells{tail}{more}.")

    def frame(self) -> pd.DataFrame:
        """The rows with the run's value and interval, and the published value, as text (rates as %)."""
        out = self.rows[list(self.on)].copy()
        run, pub = [], []
        digits = {m: 1 if m in self.rates else number_decimals(list(g[["run", "published"]].to_numpy().ravel()))
                  for m, g in self.rows.groupby("metric")}
        for _, r in self.rows.iterrows():
            m = r["metric"]
            rate = m in self.rates
            run.append(fmt_interval(r["run"], r["run_low"], r["run_high"], digits[m], 100.0 if rate else None))
            p = r["published"]
            pub.append("–" if p is None or pd.isna(p) else fmt_rate(p, 1) if rate else fmt_number(p, digits[m]))
        out["run [95% CI]"] = run
        out["n"] = self.rows["n"].map(fmt_number) if "n" in self.rows else ""
        out["paper"] = pub
        out["verdict"] = self.rows["verdict"].to_numpy()
        return out

    def display(self, run_dir: str | Path | None = None, max_rows: int = 20) -> DisplayTable:
        """The table for a reader: title (paper, table, model, kind), the rows, and a note with the
        paper's caption and section (the numeric rows go to ``<run>/tables/published_<table>.csv``)."""
        if run_dir is not None:
            path = Path(run_dir) / "tables" / f"{self.name}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            self.rows.to_csv(path, index=False)
        style = TableStyle(labels=self.on, max_rows=max_rows, caption=self.title,
                           results=("run [95% CI]", "n", "paper", "verdict"),
                           order=lambda t: t.assign(_o=(t["verdict"] == "no published row"))
                           .sort_values("_o", kind="stable").drop(columns="_o"))
        t = present(self.frame(), "", style)
        where = f"{self.table.table}, {self.table.section}: {self.table.caption}"
        t.note = " · ".join(x for x in (t.note, _KIND_TEXT[self.kind], self.why, where,
                                        f"full table: {Path(run_dir).name}/tables/{self.name}.csv" if run_dir else "")
                            if x)
        return t


def compare(run: pd.DataFrame, table: PublishedTable, *, model: str, kind: str, on: Sequence[str],
            rates: Sequence[str] = (), scale: float | Mapping[str, float] = 1.0, why: str = "", x: str | None = None,
            hue: str | None = None, panel: str | None = "metric") -> Comparison | None:
    """A :class:`Comparison` of ``run`` (long rows: the conditions ``on``, ``metric``, ``value``,
    ``low``, ``high`` and ``n``) with ``table``'s rows for ``model`` (values divided by ``scale``:
    100 for a percent table beside fractions, or per metric, ``{"SR": 100}``, for a table of mixed
    scales, 1 for a metric it does not name; ``model`` matches the table's spelling of it by
    :func:`same_model`); None when the table has no row for ``model`` or the run has no row at all
    (nothing to show)."""
    names = [m for m in dict.fromkeys(table.rows["model"].astype(str)) if m == model] or \
        [m for m in dict.fromkeys(table.rows["model"].astype(str)) if same_model(m, model)]
    if not names or run.empty:
        return None
    model = names[0]  # the table's own spelling of the model
    pub = table.rows[table.rows["model"] == model]
    if isinstance(scale, Mapping):
        pub = pub.assign(value=pub["value"] / pub["metric"].map(lambda m: scale.get(m, 1.0)))
        scale = 1.0
    keys = [*on, "metric"]
    rows = beside_published(run.rename(columns={"value": "_v"}), pub, on=keys, metric=None, value="_v",
                            low="low", high="high", scale=scale)
    rows.insert(len(keys), "n", run["n"].to_numpy() if "n" in run else np.nan)
    return Comparison(table, model, kind, rows, tuple(keys), frozenset(rates), why, x, hue, panel)


@dataclass
class Beside:
    """Every comparison of one run with its paper: the study, the run's backend, the served model and
    the paper's name for it (None: not one the paper ran), the comparisons and notes for the reader."""

    study: str
    backend: str
    served: str | None
    model: str | None
    comparisons: list[Comparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    run_dir: str | Path | None = None

    @classmethod
    def of_run(cls, study: str, backend: str, P: Mapping[str, Any], known: Mapping[str, str],
               run_dir: str | Path | None = None) -> "Beside":
        """An empty Beside for a run on ``backend``: offline, no model; else the served ``P["model"]``
        and the paper's name for it (:func:`paper_model` through ``known`` and ``P["paper_models"]``)."""
        if is_offline(backend):
            return cls(study, backend, None, None, run_dir=run_dir)
        served = P.get("model") or None
        return cls(study, backend, served, paper_model(served, known, P.get("paper_models")), run_dir=run_dir)

    def lead(self) -> str:
        """What the reader is looking at, in one or two sentences."""
        if is_offline(self.backend):
            kinds = {c.kind for c in self.comparisons}
            what = ("a calibration check or a reference" if kinds == {"calibration", "reference"} else
                    "a calibration check" if kinds == {"calibration"} else "a reference")
            who = (f"This run's backend is `{self.backend}`, a rule-based player, not a model the paper ran: "
                   f"the paper's rows below are {what}, never a reproduction.")
        elif self.model:
            who = f"This run's model `{self.served}` is the paper's **{self.model}**: its published rows are shown."
        else:
            who = (f"The paper ran no model named `{self.served}`: the rows below are a reference only. "
                   "If it is one the paper ran under another name, set `paper_models = {\"<served id>\": "
                   "\"<paper name>\"}`.")
        return who

    def markdown(self) -> str:
        """The lead, the notes and one summary sentence per comparison."""
        lines = [self.lead(), *self.notes, *(f"- {c.summary()}" for c in self.comparisons)]
        if not self.comparisons:
            lines.append("- No published table has a row for this run's conditions.")
        return "\n\n".join(lines[:1 + len(self.notes)]) + "\n\n" + "\n".join(lines[1 + len(self.notes):])

    def __repr__(self) -> str:
        return self.text()

    def tables(self) -> list[DisplayTable]:
        return [c.display(self.run_dir) for c in self.comparisons]

    def _repr_html_(self) -> str:
        return _md_html(self.markdown()) + "".join(t.to_html() for t in self.tables())

    def text(self) -> str:
        """The comparison as plain text, for a terminal (``collablab compare``)."""
        out = [re.sub(r"[`*]", "", self.lead()), *(re.sub(r"[`*]", "", n) for n in self.notes), ""]
        for c in self.comparisons:
            out += [c.title, c.frame().to_string(index=False), re.sub(r"[`*]", "", c.summary()),
                    *([c.why] if c.why else []), ""]
        if not self.comparisons:
            out.append("No published table has a row for this run's conditions.")
        return "\n".join(out).rstrip() + "\n"

    def figure(self, which: str | None = None) -> Figure | None:
        """:func:`published_plot` of the first comparison with a figure axis (or of table ``which``)."""
        for c in self.comparisons:
            if c.x and (which is None or c.table.name == which):
                return published_plot(c, backend=self.backend)
        return None


def _md_html(text: str) -> str:
    """A small Markdown subset (paragraphs, ``- `` items, ``code``, **bold**) as HTML, without a
    Markdown dependency."""
    def inline(s: str) -> str:
        s = escape(s)
        s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
        return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", s)

    html, items = [], []
    for line in text.split("\n"):
        if line.startswith("- "):
            items.append(f"<li>{inline(line[2:])}</li>")
            continue
        if items:
            html.append("<ul>" + "".join(items) + "</ul>")
            items = []
        if line.strip():
            html.append(f"<p>{inline(line)}</p>")
    if items:
        html.append("<ul>" + "".join(items) + "</ul>")
    return "<div>" + "".join(html) + "</div>"


def published_plot(c: Comparison, *, backend: Any = None, title: str | None = None) -> Figure:
    """The paper's values and the run's on the same axes: per ``c.panel`` value one panel, ``c.x``
    along it, one colour per ``c.hue`` value; the run as filled points with 95% interval bars joined
    by a solid line, the paper as hollow diamonds joined by a dashed line."""
    rows = c.rows[c.rows["run"].notna()]
    panels = list(dict.fromkeys(rows[c.panel])) if c.panel else [None]
    hues = list(dict.fromkeys(rows[c.hue])) if c.hue else [None]
    xs = list(dict.fromkeys(rows[c.x]))
    n = len(panels)
    fig = HouseFigure(figsize=(min(11.0, max(6.4, 3.6 * n + 0.6)), 3.4 + 0.25 * len(hues)), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, n, squeeze=False)).ravel()
    pos = {v: i for i, v in enumerate(xs)}
    for ax, p in zip(axes, panels):
        sub = rows if p is None else rows[rows[c.panel] == p]
        rate = p in c.rates if c.panel == "metric" else bool(c.rates)
        k = 100.0 if rate else 1.0
        for j, h in enumerate(hues):
            s = sub if h is None else sub[sub[c.hue] == h]
            if s.empty:
                continue
            colour = f"C{j}"
            off = (j - (len(hues) - 1) / 2) * 0.08
            xv = np.array([pos[v] for v in s[c.x]], dtype=float) + off
            run = s["run"].astype(float).to_numpy() * k
            lo = s["run_low"].astype(float).to_numpy() * k
            hi = s["run_high"].astype(float).to_numpy() * k
            label = "" if h is None else f"{c.hue} {h}: "
            ax.errorbar(xv, run, yerr=[np.nan_to_num(run - lo), np.nan_to_num(hi - run)], fmt="o-", color=colour,
                        capsize=3, ms=5, lw=1.4, label=f"{label}this run")
            pub = s["published"].astype(float).to_numpy() * k
            if np.isfinite(pub).any():
                ax.plot(xv, pub, "D--", color=colour, mfc="white", ms=6, lw=1.2, label=f"{label}paper ({c.model})")
        ax.set_xticks(range(len(xs)))
        long = len(xs) > 6 or max(len(str(v)) for v in xs) > 8  # method names: turn them to fit
        ax.set_xticklabels([str(v) for v in xs], rotation=35 if long else 0, ha="right" if long else "center")
        ax.set_xlabel(c.x or "")
        if p is not None:
            ax.set_title(str(p) + (" (%)" if rate else ""))
        if rate:
            ax.set_ylim(-2, 102)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="outside lower center", ncol=2 if n < 3 else min(4, len(labels)))
    figure_title(fig, title or f"{c.table.table}: {c.model} in the paper and this run ({c.kind})", backend, None)
    return fig
