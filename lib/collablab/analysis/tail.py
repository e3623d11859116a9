"""The analysis tail every MECoBench notebook ends with: one call, each part a sentence, a figure, a table.

``analysis_tail(episodes, steps, contrast_col="protocol")`` computes

1. paired significance tests of the main contrasts with :func:`compare` (paired by task and
   seed; DynaHMRC appendix),
2. the behaviour table (MECoBench Table 2) from keyword-tagged messages,
3. failure indicators (appendix F) and their lift table (Table 22), the coordination-query
   table (Table 18) and duplicate-grab rates per condition (Fig. 37),
4. the severity-stratified correction analysis (Tables 19-20), or a note saying there are
   not enough wrong-grab episodes,
5. figures (forest plot, behaviour effects, lift bars, coordination queries, correction by
   stratum, duplicate-grab rates, progress curves, team size),

and, with ``show=True``, displays the parts named in ``parts`` (:data:`TAIL_PARTS`), each under a
heading in words: one sentence on what to look at (:data:`EXPLANATIONS`), its figure, its table
through :func:`~.present.present` with the style defined next to the function that builds it
(the full table goes to ``<run_dir>/tables/tail_*.csv`` when ``run_dir`` is given). The backend is
named in every figure's title, not in the prose (the notebook's headline names it once).
Everything is returned in a dict so tests and later cells can use it.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from .behaviours import BEHAVIOUR_STYLE, backend_labels, behaviour_effects, behaviour_table, episode_behaviours, \
    load_rules, tag_messages
from .failures import (
    COORD_QUERY_STYLE,
    DUP_GRAB_STYLE,
    FAILURE_MODES,
    LIFT_STYLE,
    TABLE19_STYLE,
    TABLE20_STYLE,
    coord_query_table,
    correction_analysis,
    dup_grab_rates,
    failure_indicators,
    failure_lift,
)
from .plots import (
    behaviour_plot,
    coord_query_plot,
    dup_grab_plot,
    forest_plot,
    lift_plot,
    progress_curves,
    stratum_plot,
    team_size_plot,
)
from .present import DisplayTable, present
from .significance import CONTRAST_STYLE, compare, contrast_table, paired_table, require_columns

__all__ = ["EXPLANATIONS", "TAIL_PARTS", "analysis_tail"]

#: The parts :func:`analysis_tail` can display, in display order.
TAIL_PARTS: tuple[str, ...] = ("contrasts", "behaviours", "failure_modes", "coordination", "correction",
                               "duplicate_grabs", "progress", "team_size")

#: The one sentence above each part: what to look at (a student reads these).
EXPLANATIONS: dict[str, str] = {
    "comparisons": "Each dot is condition a minus condition b on the same tasks and seeds; an interval that "
                   "stays clear of the dashed line is a difference this run detects.",
    "behaviour_table": "How often each behaviour shows up in the messages, and how success and completion differ "
                       "between episodes with and without it: an association, not an effect.",
    "lift_table": "Bars right of the dashed line mark failure modes that are more common in failed episodes "
                  "than in successful ones.",
    "coord_query_table": "Episodes with a coordination question against the rest: more objects and more stuck or "
                         "negative reports would mean questions come with difficulty.",
    "correction": "Bars above zero mean correcting a wrong grab helped, comparing episodes with equally many "
                  "wrong grabs.",
    "dup_grab_rates": "How often an agent tried to grab an object a teammate was grabbing or holding.",
    "progress": "A curve that rises earlier means the condition finishes its subgoals sooner.",
    "team_size": "Success rate for each team size: look for where adding an agent stops helping.",
}
_HEADINGS: dict[str, str] = {
    "contrasts": "Paired contrasts of {what}",
    "behaviours": "Collaborative behaviours (paper Table 2)",
    "failure_modes": "Failure modes and their lift (paper Table 22)",
    "coordination": "Coordination questions (paper Table 18)",
    "correction": "Does correcting a wrong grab help? (paper Tables 19-20)",
    "duplicate_grabs": "Duplicate grabs (paper Fig. 37)",
    "progress": "Progress over the step budget (paper Fig. 33)",
    "team_size": "Team size (paper Fig. 7a)",
}
_PLAIN = {"n_agents": "team size"}


def _pair_keys(episodes: pd.DataFrame, contrast_col: str, outcome: str, pair_col: str,
               contrasts: Sequence[tuple[Hashable, Hashable]]) -> tuple[list[str], str]:
    """Pair by (task, seed) when that matches episodes across conditions, else by task."""
    if "seed" not in episodes.columns or pair_col == "seed" or not contrasts:
        return [pair_col], ""
    a, b = contrasts[0]
    if len(paired_table(episodes, contrast_col, outcome, a, b, [pair_col, "seed"])):
        return [pair_col, "seed"], ""
    return [pair_col], f"no ({pair_col}, seed) pair is shared by {a!r} and {b!r}: paired by {pair_col} only"


def _comparisons(episodes: pd.DataFrame, contrast_col: str, contrasts: Sequence[tuple[Hashable, Hashable]] | None,
                 outcome: str, pair_col: str, n_resamples: int) -> tuple[pd.DataFrame, list[str]]:
    notes: list[str] = []
    levels = list(pd.unique(episodes[contrast_col].dropna()))
    if contrasts is None:
        contrasts = [(levels[i], levels[j]) for i in range(len(levels)) for j in range(i + 1, len(levels))]
    contrasts = [tuple(c) for c in contrasts]  # type: ignore[misc]
    if not contrasts:
        notes.append(f"only one condition in {contrast_col!r} ({levels}): no contrast to test")
        return pd.DataFrame(), notes
    keys, note = _pair_keys(episodes, contrast_col, outcome, pair_col, contrasts)
    if note:
        notes.append(note)
    outcomes = [outcome] + (["cr"] if outcome != "cr" and "cr" in episodes.columns else [])
    tables = []
    for out in outcomes:
        values = episodes[out].dropna().astype(float)
        binary = bool(values.isin([0.0, 1.0]).all())
        tests = ("sign_flip", "wilcoxon", "mcnemar", "gee") if binary else ("sign_flip", "wilcoxon")
        data = episodes.assign(**{out: episodes[out].astype(float)})
        tables.append(compare(data, contrast_col, out, keys, contrasts, tests, cluster_col=pair_col,
                              n_resamples=n_resamples, n_permutations=n_resamples))
    return pd.concat(tables, ignore_index=True), notes


def _md(text: str) -> None:
    from IPython.display import Markdown, display

    display(Markdown(text))


def _show_obj(obj: Any) -> None:
    from IPython.display import display

    display(obj)


def analysis_tail(
    episodes: pd.DataFrame,
    steps: pd.DataFrame,
    *,
    contrast_col: str,
    contrasts: Sequence[tuple[Hashable, Hashable]] | None = None,
    outcome: str = "success",
    pair_col: str = "task_id",
    show: bool = True,
    by: str | None = "structure",
    n_resamples: int = 2000,
    run_dir: str | Path | None = None,
    parts: Collection[str] = TAIL_PARTS,
) -> dict[str, Any]:
    """Run the whole analysis tail; display it when ``show``; return every table and figure.

    ``contrast_col`` names the condition column whose levels are compared (e.g.
    ``"protocol"``); ``contrasts`` lists ``(a, b)`` pairs (default: every pair in order of
    appearance).  ``by`` splits the behaviour, failure and correction tables (default
    ``structure``: parallel / sequential; ignored when the column is missing).
    ``n_resamples`` sets bootstrap and permutation resamples of the contrasts (and, up to
    1000, of the team-size CI band).  ``run_dir`` (optional) receives each displayed table's
    full CSV under ``tables/tail_*.csv``; ``parts`` names the parts to display (default every
    one of :data:`TAIL_PARTS`; a notebook that shows a part in its body leaves it out here).

    Returned keys: backends, rules_version, messages, episode_behaviours,
    behaviour_effects, behaviour_table, indicators, lift_table, coord_query_table,
    correction (a :class:`~collablab.analysis.failures.CorrectionAnalysis`),
    dup_grab_rates, comparisons, contrast_table, displays (name -> DisplayTable),
    figures (name -> Figure), notes (list of str).
    """
    unknown = [p for p in parts if p not in TAIL_PARTS]
    if unknown:
        raise ValueError(f"parts: {unknown} unknown; allowed: {', '.join(TAIL_PARTS)}")
    require_columns(episodes, ["episode_id", contrast_col, outcome, pair_col, "success", "cr"])
    if steps is None:
        steps = pd.DataFrame(columns=["episode_id"])
    by = by if by is not None and by in episodes.columns else None
    rules = load_rules()
    notes: list[str] = []
    if episodes["episode_id"].duplicated().any() and "episode_key" in episodes.columns \
            and "episode_key" in steps.columns and not episodes["episode_key"].duplicated().any():
        episodes = episodes.assign(episode_id=episodes["episode_key"])
        steps = steps.assign(episode_id=steps["episode_key"])
        notes.append("episode_id repeats across grid points: episodes identified by episode_key instead")
    backends = backend_labels(episodes)
    if not backends:
        episodes = episodes.assign(backend="unknown")
        notes.append("episodes have no 'backend' column: labelled 'unknown'")

    tagged = tag_messages(steps, rules)
    eb = episode_behaviours(episodes, steps, rules, tagged=tagged)
    effects = behaviour_effects(episodes, steps, by, rules=rules, tagged=tagged)
    table2 = behaviour_table(episodes, steps, by, rules=rules, long=effects)
    if not len(tagged):
        notes.append("no agent messages in these episodes: every behaviour is absent")

    ind = failure_indicators(episodes, steps, rules=rules, tagged=tagged)
    lift = failure_lift(ind, FAILURE_MODES, by=by)
    table18 = coord_query_table(ind, by=by)
    corr = correction_analysis(ind, by=by)
    rates = dup_grab_rates(ind, by=contrast_col)
    comparisons, cmp_notes = _comparisons(episodes, contrast_col, contrasts, outcome, pair_col, n_resamples)
    notes += cmp_notes + corr.notes
    wide = contrast_table(comparisons) if len(comparisons) else pd.DataFrame()

    figures: dict[str, Figure] = {}
    if len(comparisons):
        figures["forest"] = forest_plot(comparisons, backend=episodes)
    if len(tagged):
        figures["behaviours"] = behaviour_plot(effects, backend=episodes)
    figures["lift"] = lift_plot(lift, backend=episodes)
    figures["coord_query"] = coord_query_plot(table18, backend=episodes)
    if "progress" in episodes.columns and "n_agents" in episodes.columns:
        figures["progress"] = progress_curves(episodes, contrast_col, backend=episodes)
    figures["dup_grab"] = dup_grab_plot(rates, backend=episodes)
    if corr.ok:
        figures["correction"] = stratum_plot(corr.table20, backend=episodes)
    if "n_agents" in episodes.columns and episodes["n_agents"].nunique() > 1:
        figures["team_size"] = team_size_plot(episodes, "success", hue=contrast_col, backend=episodes,
                                              n_boot=min(1000, n_resamples))

    style2 = replace(BEHAVIOUR_STYLE, caption=f"{BEHAVIOUR_STYLE.caption}; keyword rules {rules.version}")
    displays: dict[str, DisplayTable] = {
        "behaviours": present(effects, "tail_behaviours", style2, run_dir),
        "failure_modes": present(lift, "tail_failure_lift", LIFT_STYLE, run_dir),
        "coordination": present(table18, "tail_coord_queries", COORD_QUERY_STYLE, run_dir),
        "duplicate_grabs": present(rates, "tail_dup_grabs", DUP_GRAB_STYLE, run_dir),
    }
    if len(wide):
        displays["contrasts"] = present(wide, "tail_contrasts", CONTRAST_STYLE, run_dir)
    if corr.ok:
        displays["table19"] = present(corr.table19, "tail_table19", TABLE19_STYLE, run_dir)
        displays["table20"] = present(corr.table20, "tail_table20", TABLE20_STYLE, run_dir)

    result: dict[str, Any] = dict(
        backends=backends, rules_version=rules.version, messages=tagged, episode_behaviours=eb,
        behaviour_effects=effects, behaviour_table=table2, indicators=ind, lift_table=lift,
        coord_query_table=table18, correction=corr, dup_grab_rates=rates, comparisons=comparisons,
        contrast_table=wide, displays=displays, figures=figures, notes=notes,
    )
    if show:
        _show(result, contrast_col, parts)
    return result


def _part(name: str, sentence: str, *objs: Any, what: str = "") -> None:
    """One part: a heading in words, the sentence on what to look at, then its figure and table(s)."""
    _md(f"### {_HEADINGS[name].format(what=what)}\n\n{sentence}")
    for obj in objs:
        if obj is not None:
            _show_obj(obj)


def _show(r: dict[str, Any], contrast_col: str, parts: Collection[str]) -> None:
    figs, tabs, corr = r["figures"], r["displays"], r["correction"]
    what = _PLAIN.get(contrast_col, contrast_col)
    for name in TAIL_PARTS:
        if name not in parts:
            continue
        if name == "contrasts":
            if len(r["comparisons"]):
                _part(name, EXPLANATIONS["comparisons"], figs["forest"], tabs["contrasts"], what=what)
            else:
                _part(name, f"No contrast to test: {what} has a single condition in these episodes.", what=what)
        elif name == "behaviours":
            note = r["behaviour_table"].attrs.get("note")
            _part(name, EXPLANATIONS["behaviour_table"] + (f" Here: {note}." if note else ""),
                  figs.get("behaviours"), tabs["behaviours"])
        elif name == "failure_modes":
            _part(name, EXPLANATIONS["lift_table"], figs["lift"], tabs["failure_modes"])
        elif name == "coordination":
            _part(name, EXPLANATIONS["coord_query_table"], figs["coord_query"], tabs["coordination"])
        elif name == "correction":
            if corr.ok:
                _part(name, EXPLANATIONS["correction"], figs["correction"], tabs["table19"], tabs["table20"])
            else:
                _part(name, "Too few wrong-grab episodes for the stratified correction analysis: it needs "
                            "episodes with and without a correction.")
        elif name == "duplicate_grabs":
            _part(name, EXPLANATIONS["dup_grab_rates"], figs["dup_grab"], tabs["duplicate_grabs"])
        elif name in ("progress", "team_size") and name in figs:
            _part(name, EXPLANATIONS[name], figs[name])
    notes = [n for n in r["notes"] if n not in corr.notes or "correction" in parts]
    if notes:
        _md("**Notes on this analysis**\n\n" + "\n".join(f"- {n[:1].upper()}{n[1:]}." for n in notes))
