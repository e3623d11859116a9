"""The analysis tail every notebook ends with: one call, tables + figures + one sentence each.

``analysis_tail(episodes, steps, contrast_col="protocol")`` computes

1. the behaviour table (MECoBench Table 2) from keyword-tagged messages,
2. failure indicators (appendix F) and their lift table (Table 22), the coordination-query
   table (Table 18) and duplicate-grab rates per condition (Fig. 37),
3. the severity-stratified correction analysis (Tables 19-20), or a note saying there are
   not enough wrong-grab episodes,
4. paired significance tests of the main contrasts with :func:`compare` (paired by task and
   seed),
5. figures (forest plot, lift bars, progress curves, duplicate-grab rates, team size),

and, with ``show=True``, displays them in the notebook, each with one sentence saying what
it shows.  Everything is returned in a dict so tests and later cells can use it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from .behaviours import backend_labels, behaviour_effects, behaviour_table, episode_behaviours, load_rules, tag_messages
from .failures import (
    FAILURE_MODES,
    coord_query_table,
    correction_analysis,
    dup_grab_rates,
    failure_indicators,
    failure_lift,
)
from .plots import backend_title, dup_grab_plot, forest_plot, lift_plot, progress_curves, stratum_plot, team_size_plot
from .significance import compare, paired_table, require_columns

__all__ = ["EXPLANATIONS", "analysis_tail"]

#: The one sentence shown above each table / figure (a student reads these).
EXPLANATIONS: dict[str, str] = {
    "backend": "Which policy produced these episodes; numbers from the offline heuristic or oracle policy "
               "teach the method but are not findings about LLMs.",
    "behaviour_table": "How often each collaborative behaviour appears in agent messages (Freq., % of episodes) "
                       "and how much higher success (ΔSR) and completion (ΔCR) are, in percentage points, in "
                       "episodes with it than without it: a correlation, not a causal effect (MECoBench Table 2).",
    "comparisons": "Paired tests of the main contrasts on the same tasks and seeds: the estimate is condition "
                   "a minus condition b, the CI is a paired bootstrap, and p_adjusted is Holm-corrected.",
    "forest": "Each dot is a contrast's estimated difference with its 95% CI; a bar crossing the dashed line "
              "means the data are compatible with no difference.",
    "lift_table": "Failure modes found in the step records: Freq. is the share of episodes with the mode, lift is "
                  "its rate in failed episodes divided by its rate in successful ones (∞ = only ever seen in "
                  "failures), ΔSR is the success-rate gap with vs without it (MECoBench Table 22).",
    "lift_plot": "Bars right of the dashed line (lift > 1) mark failure modes that are more common in failed "
                 "episodes than in successful ones.",
    "coord_query_table": "Episodes where agents asked coordination questions compared with the rest: more "
                         "objects, stuck reports or negative reports suggest questions are a reaction to "
                         "difficulty (MECoBench Table 18).",
    "correction": "Does correcting a wrong grab help? Episodes with at least one wrong grab are compared within "
                  "severity strata (#wrong grabs 1, 2, 3, 4+) so that corrected and uncorrected episodes with "
                  "equally many errors are compared (MECoBench Tables 19-20).",
    "dup_grab_rates": "Share of episodes in which an agent tried to grab an object a teammate was grabbing or "
                      "holding (duplicate grab, MECoBench Fig. 37), with 95% Wilson intervals.",
    "progress": "Mean completion rate as the team spends its step budget; a curve that rises earlier means the "
                "condition finishes subgoals sooner.",
    "team_size": "Mean success rate for each team size with a 95% bootstrap band (MECoBench Fig. 7a).",
}


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


def _display(show: bool, explanation: str, obj: Any = None, heading: str | None = None) -> None:
    if not show:
        return
    from IPython.display import Markdown, display

    text = f"**{heading}.** {explanation}" if heading else explanation
    display(Markdown(text))
    if obj is not None:
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
) -> dict[str, Any]:
    """Run the whole analysis tail; display it when ``show``; return every table and figure.

    ``contrast_col`` names the condition column whose levels are compared (e.g.
    ``"protocol"``); ``contrasts`` lists ``(a, b)`` pairs (default: every pair in order of
    appearance).  ``by`` splits the behaviour, failure and correction tables (default
    ``structure``: parallel / sequential; ignored when the column is missing).
    ``n_resamples`` sets bootstrap and permutation resamples of the contrasts (and, up to
    1000, of the team-size CI band).

    Returned keys: backends, rules_version, messages, episode_behaviours,
    behaviour_effects, behaviour_table, indicators, lift_table, coord_query_table,
    correction (a :class:`~collablab.analysis.failures.CorrectionAnalysis`),
    dup_grab_rates, comparisons, figures (name -> Figure), notes (list of str).
    """
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
    label = backend_title(episodes) if backends else "backend: unknown (no 'backend' column)"
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

    figures: dict[str, Figure] = {}
    if len(comparisons):
        figures["forest"] = forest_plot(comparisons, backend=episodes)
    figures["lift"] = lift_plot(lift, backend=episodes)
    if "progress" in episodes.columns and "n_agents" in episodes.columns:
        figures["progress"] = progress_curves(episodes, contrast_col, backend=episodes)
    figures["dup_grab"] = dup_grab_plot(rates, backend=episodes)
    if corr.ok:
        figures["correction"] = stratum_plot(corr.table20, backend=episodes)
    if "n_agents" in episodes.columns and episodes["n_agents"].nunique() > 1:
        figures["team_size"] = team_size_plot(episodes, "success", hue=contrast_col, backend=episodes,
                                              n_boot=min(1000, n_resamples))

    result: dict[str, Any] = dict(
        backends=backends, rules_version=rules.version, messages=tagged, episode_behaviours=eb,
        behaviour_effects=effects, behaviour_table=table2, indicators=ind, lift_table=lift,
        coord_query_table=table18, correction=corr, dup_grab_rates=rates, comparisons=comparisons,
        figures=figures, notes=notes,
    )
    if show:
        _show(result, label, contrast_col)
    return result


def _show(r: dict[str, Any], label: str, contrast_col: str) -> None:
    _display(True, f"{label}. {EXPLANATIONS['backend']} Behaviour rules: {r['rules_version']}.", heading="Backend")
    _display(True, EXPLANATIONS["behaviour_table"], r["behaviour_table"], heading="Collaborative behaviours")
    if r["behaviour_table"].attrs.get("note"):
        _display(True, r["behaviour_table"].attrs["note"] + ".")
    if len(r["comparisons"]):
        cols = ["contrast", "outcome", "test", "estimate", "ci_low", "ci_high", "p_value", "p_adjusted", "n"]
        _display(True, EXPLANATIONS["comparisons"], r["comparisons"][cols], heading=f"Contrasts of {contrast_col}")
        _display(True, EXPLANATIONS["forest"], r["figures"]["forest"])
    else:
        _display(True, f"No contrast to test: {contrast_col!r} has a single condition.", heading="Contrasts")
    _display(True, EXPLANATIONS["lift_table"],
             r["lift_table"].drop(columns=[c for c in r["lift_table"].columns if c.endswith(("_ci_low", "_ci_high"))]),
             heading="Failure modes")
    _display(True, EXPLANATIONS["lift_plot"], r["figures"]["lift"])
    _display(True, EXPLANATIONS["coord_query_table"], r["coord_query_table"], heading="Coordination queries")
    corr = r["correction"]
    if corr.ok:
        _display(True, EXPLANATIONS["correction"], corr.table19, heading="Correction and wrong grabs")
        _display(True, "Per-stratum differences (correction minus no correction) and the adjusted effect.",
                 corr.table20)
        _display(True, "Bars above zero: correction helped at that severity.", r["figures"]["correction"])
    else:
        _display(True, "Not enough wrong-grab episodes for the stratified correction analysis: "
                 + "; ".join(corr.notes) + ".", heading="Correction and wrong grabs")
    _display(True, EXPLANATIONS["dup_grab_rates"], r["figures"]["dup_grab"], heading="Duplicate grabs")
    if "progress" in r["figures"]:
        _display(True, EXPLANATIONS["progress"], r["figures"]["progress"], heading="Progress")
    if "team_size" in r["figures"]:
        _display(True, EXPLANATIONS["team_size"], r["figures"]["team_size"], heading="Team size")
    other = [n for n in r["notes"] if n not in corr.notes]
    if other:
        _display(True, "Notes: " + "; ".join(other) + ".")
