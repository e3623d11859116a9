"""Notebook 06's tables, how each is displayed, its figures and its headline (dynahmrc.tex §4.4-4.6,
appendix leader election, LLM cost, coordination failures, paired comparison, weight sensitivity).

Every table is a pure function of the episode frame (:func:`.experiments.episode_frame`); means
carry 95% percentile bootstrap CIs (``n_resamples``, 10,000 in the paper). The sentences come from
:mod:`.findings`, the figures from :mod:`.plots`. Long tables are kept long (the findings quote
them, their CSVs go to the run folder); the notebook shows compact views: metric tables with each
mean and its interval in one cell, and wide views (:func:`wide`) with a condition per column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import pandas as pd
from matplotlib.figure import Figure

from ...analysis.findings import OFFLINE_BACKENDS, Finding, Report
from ...analysis.present import TableStyle
from . import findings as F
from . import plots
from .difficulty import LEVELS
from .experiments import SENSITIVITY, SENSITIVITY_KIND, episode_frame
from .metrics import election_summary
from .robots import COMPOSITIONS, ROBOT_TYPES
from .stats import paired_comparison, stage_cost_table, summary_table, weight_sensitivity

__all__ = ["FIGURES", "METRICS", "PAPER_SENSITIVITY", "figure", "llm_cost", "read_notebook", "sensitivity_frame",
           "unseen_frame", "unseen_objects", "wide"]

METRICS = ("success", "ps", "ts", "as_per_robot", "cc")
DECENTRALIZED = ("DynaHMRC", "CoELA")
#: The framework and the LLM-style baselines (the search baselines have their own section).
LLM_STYLE = ("DynaHMRC", "CoELA", "COHERENT")
SETTINGS = ("Static", "CTO", "IRZ", "ANC", "REC")
_RENAME = {"method_label": "method", "level": "difficulty", "setting": "setting", "n": "episodes",
           "n_types": "robot types", "ablation_label": "condition", "success_mean": "success",
           "ps_mean": "partial success", "ts_mean": "temporal steps", "as_per_robot_mean": "action steps / robot",
           "cc_mean": "communications / robot"}
_CI = "mean [95% bootstrap interval]"
#: The paper prints "-" for the search baselines' AS and CC (tab:constant_exp ... tab:removal_exp): one
#: planner moves the whole team and no robot communicates. The records keep both (AS is still defined).
_AS_CC = tuple(f"{m}_{b}" for m in ("as_per_robot", "cc") for b in ("mean", "low", "high"))
_NO_AS_CC = ("action steps and communications left out as in the paper (one planner moves the team; no robot "
             "communicates); both in the CSV.")
#: ``lab:sensitivity_dyna``'s tables and what they report, in words (GPT-4o and fine-tuned Qwen3-4B rows).
PAPER_SENSITIVITY = {
    "CTO": "paper Table dT_CTO: earlier target changes are more disruptive to the baselines (at T = 3 COHERENT "
           "and CoELA reach only 14.8% and 22.2% success), while fine-tuned DynaHMRC keeps 75.9% and stays "
           "strong across T = 3, 5, 10",
    "IRZ": "paper Table dN_IRZ: results do not strictly degrade as restricted zones are added (COHERENT 75.0%, "
           "47.6%, 77.8% with 1, 2, 3 zones), since the difficulty depends on whether zones block critical paths",
    "ANC": "paper Table dT_ANC_REC: fine-tuned DynaHMRC has the best or near-best success and partial success "
           "at every trigger step T = 3, 5, 13",
    "REC": "paper Table dT_ANC_REC: fine-tuned DynaHMRC has the best or near-best success and partial success "
           "at every trigger step T = 3, 5, 13",
}


def _metric_style(caption: str, **kw: Any) -> TableStyle:
    """A summary table's style: each metric's mean and interval in one cell, rates in %."""
    return TableStyle(rates=("success_mean", "ps_mean"), rename=_RENAME, caption=caption,
                      intervals={f"{m}_mean": (f"{m}_low", f"{m}_high") for m in METRICS}, **kw)


def wide(t: pd.DataFrame, index: list[str], column: str, metrics: list[str]) -> pd.DataFrame:
    """``t`` with one column per value of ``column`` (and metric): ``"<value>"`` (or
    ``"<value> <metric>"`` with several metrics) and, where ``t`` has them, its ``_low``/``_high``
    bounds, so that :func:`~collablab.analysis.present.present` merges each interval into its cell."""
    out = t[index].drop_duplicates().reset_index(drop=True)
    for m in metrics:
        mean = f"{m}_mean" if f"{m}_mean" in t.columns else m
        for v in dict.fromkeys(t[column]):
            name = str(v) if len(metrics) == 1 else f"{v} {F.NAMES.get(m, m)}"
            part = t[t[column] == v]
            cols = {mean: name, **{f"{m}_{b}": f"{name}_{b}" for b in ("low", "high") if f"{m}_{b}" in t.columns}}
            out = out.merge(part[index + list(cols)].rename(columns=cols), on=index, how="left")
    return out


def _styles(R: Report) -> dict[str, TableStyle]:
    pct = [c for c in R.tables.get("centralized_wide", pd.DataFrame()).columns
           if c.endswith(("success rate", "partial success"))]
    return {
        "by_difficulty": _metric_style(f"Static tasks by method and difficulty: {_CI}; success and partial success "
                                       "in %."),
        "by_composition_wide": TableStyle(
            rates=LLM_STYLE, caption=f"Success rate by team (rows) and method (columns), static tasks, {_CI}; "
                                     "every method and metric in tables/by_composition.csv."),
        "dynamic": _metric_style(f"Medium tasks under each variation (changed at step T): {_CI}."),
        "dynamic_goal_zone_wide": TableStyle(
            rates=LLM_STYLE, caption=f"Success rate per team composition under CTO and IRZ (paper Tables V-VI), "
                                     f"{_CI}; every metric in tables/dynamic_by_team.csv."),
        "dynamic_team_change_wide": TableStyle(
            rates=LLM_STYLE, caption=f"Success rate per team transition under ANC and REC (paper Tables VII-VIII: "
                                     f"team before → after), {_CI}; every metric in tables/dynamic_by_team.csv."),
        "sensitivity_CTO": _metric_style(f"CTO on Pack Objects by trigger step T (default 5; {PAPER_SENSITIVITY['CTO']}): "
                                         f"{_CI}.", labels=("T",)),
        "sensitivity_IRZ": _metric_style(f"IRZ on Pack Objects by number of restricted zones at T = 5 "
                                         f"({PAPER_SENSITIVITY['IRZ']}): {_CI}.", labels=("zones",)),
        "sensitivity_ANC_REC_wide": TableStyle(
            rates=[c for c in R.tables.get("sensitivity_ANC_REC_wide", pd.DataFrame()).columns
                   if c.endswith(("success rate", "partial success"))], rename={"method_label": "method"},
            labels=("T",), caption=f"ANC and REC on Pack Objects by trigger step T (default 5; "
                                   f"{PAPER_SENSITIVITY['ANC']}): {_CI}."),
        "centralized_wide": TableStyle(rates=pct, rename={"n_types": "robot types"},
                                       caption=f"Decentralized DynaHMRC and centralized COHERENT: {_CI}."),
        "coordination_wide": TableStyle(caption="Redundant and conflicting actions per episode (means), by setting "
                                                "and method; invalid actions in tables/coordination.csv."),
        "search_dynamic": _metric_style(f"Search baselines at medium difficulty, static and under each variation "
                                        f"(paper Tables V-VIII, MCTS rows): {_CI}; {_NO_AS_CC}", drop=_AS_CC),
        "search_by_types": _metric_style(f"Search baselines by the number of robot types: {_CI}; {_NO_AS_CC}",
                                         drop=_AS_CC),
        "ablation_overall": _metric_style(f"DynaHMRC and its ablations over the ablated static tasks and every "
                                          f"variation: {_CI}."),
        "ablation_wide": TableStyle(rates=list(SETTINGS), rename={"ablation_label": "condition"},
                                    caption=f"Success rate of each ablation by setting: {_CI}."),
        "election": TableStyle(rates=("first_round", "within_two", "referee"), drop=("row",),
                               rename={"first_round": "first round", "within_two": "within two rounds",
                                       "referee": "referee decides", "n": "elections"}),
        "leaders": TableStyle(rates=ROBOT_TYPES, labels=("team",),
                              caption="Share of elections each leader type won, by team."),
        "paired": TableStyle(drop=("a", "b", "difference", "mean_a", "mean_b", "p_floor", "n_unmatched"),
                             intervals={"mean_diff": ("ci_low", "ci_high")}, labels=("setting", "metric"),
                             rename={"mean_diff": "DynaHMRC − CoELA", "p_value": "p (paired t)",
                                     "n_pairs": "paired tasks"},
                             caption="DynaHMRC minus CoELA on tasks matched by task and run: mean difference "
                                     "[95% paired bootstrap interval]; success and partial success as fractions; "
                                     "both means in the CSV."),
        "weight_sensitivity": TableStyle(rates=("pairwise_acc",), rename={
            "rho_D_PS": "ρ(D, PS)", "rho_D_TS": "ρ(D, TS)", "rho_D_H": "ρ(D, hardness)",
            "pairwise_acc": "pairs ordered", "label_changes": "labels changed"},
            caption="Difficulty score D = αL + βN + γY against empirical hardness (Spearman ρ), Pack Objects "
                    "tasks, α = γ = (1 − β)/2; the paper's weights are (0.4, 0.2, 0.4)."),
        "unseen_objects": _metric_style(f"DynaHMRC on static medium Pack Objects tasks and their twins with unseen "
                                        f"targets (paper Table unseen_obj): {_CI}.", labels=("objects",)),
        "llm_cost": TableStyle(drop=tuple(f"calls_{s}" for s in ("SD", "TALB", "LE", "HMRC", "GD", "LP")),
                               rename={"method_label": "method", "n": "episodes"},
                               caption="Mean calls and tokens per episode, tokens per call by stage."),
    }


def _means(e: pd.DataFrame, by: list[str], n_resamples: int) -> pd.DataFrame:
    return summary_table(e, by, metrics=METRICS, n_resamples=n_resamples).round(4)


def _order(t: pd.DataFrame, col: str, order: tuple[str, ...] | list[str]) -> pd.DataFrame:
    if col in t.columns:
        t = t.assign(_o=t[col].map({v: i for i, v in enumerate(order)}).fillna(len(order))).sort_values(
            ["_o", *[c for c in t.columns if c in ("method_label",)]]).drop(columns="_o")
    return t.reset_index(drop=True)


def read_notebook(episodes: pd.DataFrame, steps: pd.DataFrame, P: Mapping[str, Any],
                  run_dir: str | Path | None = None) -> Report:
    """Every table, display style, finding and headline of notebook 06 from its run (``run_dir``:
    the run folder, where each displayed table's full CSV goes)."""
    e = episode_frame(episodes)
    backend = ", ".join(sorted(set(e["backend"])))
    R = Report(backend, len(episodes), run_dir=run_dir)  # every episode, the unseen block included
    nr = int(P.get("n_resamples", 10_000))
    static = e[(e["setting"] == "Static") & (e["ablation_label"] == "full")]
    dyn = e[(e["setting"] != "Static") & (e["ablation_label"] == "full")]
    R.tables["by_difficulty"] = _order(_means(static, ["method_label", "level"], nr), "level", LEVELS)
    R.tables["by_composition"] = _order(_means(static, ["method_label", "team"], nr), "team", COMPOSITIONS)
    llm_style = R.tables["by_composition"][R.tables["by_composition"]["method_label"].isin(LLM_STYLE)]
    R.tables["by_composition_wide"] = wide(llm_style, ["team"], "method_label", ["success"])
    R.tables["by_kind"] = _means(static, ["method_label", "kind", "level"], nr)
    llm_dyn = dyn[~dyn["method"].str.contains("mcts")]
    R.tables["dynamic"] = _means(llm_dyn, ["method_label", "setting"], nr)
    if len(llm_dyn):  # tab:goal_exp ... tab:removal_exp print one block per team composition (or transition)
        comp = llm_dyn.assign(team=[t if a == t else f"{t} → {a}" for t, a in zip(llm_dyn["team"], llm_dyn["team_after"])])
        R.tables["dynamic_by_team"] = _order(_means(comp, ["method_label", "setting", "team"], nr), "setting", SETTINGS)
        for name, settings in (("dynamic_goal_zone_wide", ("CTO", "IRZ")), ("dynamic_team_change_wide", ("ANC", "REC"))):
            part = R.tables["dynamic_by_team"][R.tables["dynamic_by_team"]["setting"].isin(settings)
                                               & R.tables["dynamic_by_team"]["method_label"].isin(LLM_STYLE)]
            if len(part):
                R.tables[name] = wide(part, ["setting", "team"], "method_label", ["success"])
    sens = sensitivity_frame(e, P)
    for v, (key, values) in SENSITIVITY.items():
        part = sens[sens["setting"] == v]
        if v in ("CTO", "IRZ") and part[key].nunique() > 1:
            R.tables[f"sensitivity_{v}"] = _order(_means(part, [key, "method_label"], nr), key, values)
    ar = sens[sens["setting"].isin(["ANC", "REC"])]
    if ar["T"].nunique() > 1:
        R.tables["sensitivity_ANC_REC"] = _order(_means(ar, ["setting", "T", "method_label"], nr), "T",
                                                 SENSITIVITY["ANC"][1])
        t = R.tables["sensitivity_ANC_REC"]
        R.tables["sensitivity_ANC_REC_wide"] = wide(t, ["T", "method_label"], "setting", ["success", "ps"])
    dsearch = dyn[dyn["method"].str.contains("mcts")]
    if len(dsearch):  # tab:goal_exp ... tab:removal_exp's MCTS rows, beside the same search at static medium
        base = e[(e["setting"] == "Static") & (e["level"] == "medium") & e["method"].isin(set(dsearch["method"]))]
        R.tables["search_dynamic"] = _order(_means(pd.concat([base, dsearch]), ["method_label", "setting"], nr),
                                            "setting", SETTINGS)
    cen = e[(e["ablation_label"] == "full") & e["method"].isin(["dynahmrc", "coherent"])]
    R.tables["centralized"] = _order(_means(cen, ["method_label", "n_types", "setting"], nr), "setting", SETTINGS)
    R.tables["centralized_wide"] = wide(R.tables["centralized"], ["n_types", "setting"], "method_label",
                                        ["success", "ps"])
    levels = list(P.get("ablation_levels", ["medium"]))
    abl = e[(e["method"] == "dynahmrc") & (e["level"].isin(levels) | (e["setting"] != "Static"))]
    R.tables["ablation"] = _order(_means(abl, ["ablation_label", "setting"], nr), "setting", SETTINGS)
    R.tables["ablation_overall"] = _means(abl, ["ablation_label"], nr).sort_values("success_mean").reset_index(drop=True)
    R.tables["ablation_wide"] = wide(R.tables["ablation"], ["ablation_label"], "setting", ["success"])
    search = e[e["method"].str.contains("mcts")]
    if len(search):
        R.tables["search"] = _order(_means(search, ["method_label", "team"], nr), "team", COMPOSITIONS)
        R.tables["search_by_types"] = _means(search, ["method_label", "n_types"], nr)
    elect = e[(e["method"] == "dynahmrc") & (e["ablation_label"] == "full") & (e["election_rounds"] > 0)]
    if len(elect):
        es = election_summary(elect)
        R.tables["election"] = pd.DataFrame([{"row": 0, "n": es.n, "first_round": es.first_round,
                                              "within_two": es.within_two, "referee": es.referee}])
        R.tables["leaders"] = es.leader_shares.round(3)
    coord = e[(e["ablation_label"] == "full") & ~e["method"].str.contains("mcts")]
    R.tables["coordination"] = _order(coord.groupby(["method_label", "setting"])[
        ["redundant", "conflicting", "invalid_actions"]].mean().round(3).reset_index(), "setting", SETTINGS)
    R.tables["coordination_wide"] = wide(R.tables["coordination"], ["setting"], "method_label",
                                         ["redundant", "conflicting"])
    R.tables["llm_cost"] = stage_cost_table(coord, ["method_label", "setting"]).round(2)
    pairs = []
    for setting, part in (("Static", static), ("Dynamic", dyn)):
        part = part[part["method_label"].isin(DECENTRALIZED)]
        if part["method_label"].nunique() == 2:
            t = paired_comparison(part, method_col="method_label", a="CoELA", b="DynaHMRC",
                                  pair_on=["task", "variation", "run"], metrics=METRICS, n_resamples=nr)
            t = t.assign(setting=setting, metric=t["metric"].map(F.NAMES), p_floor=t["p_value"].clip(lower=0.001))
            pairs.append(t[["setting", *[c for c in t.columns if c != "setting"]]])
    if pairs:
        R.tables["paired"] = pd.concat(pairs, ignore_index=True)
    pack = static[(static["method"] == "dynahmrc") & (static["kind"] == "pack")]
    if pack["task"].nunique() >= 4:
        tasks = pack.groupby("task").agg(L=("L", "first"), N=("N", "first"), Y=("Y", "first"), ps=("ps", "mean"),
                                         ts=("ts", "mean")).reset_index()
        R.tables["weight_sensitivity"] = weight_sensitivity(tasks).round(3)
    uto = unseen_frame(episodes, P)
    if len(uto):
        R.tables["unseen_objects"] = _order(_means(uto, ["method_label", "objects"], nr), "objects", ("seen", "unseen"))
    _findings(R)
    for name, t in R.tables.items():
        if "backend" not in t.columns:
            R.tables[name] = t.assign(backend=backend)
    R.styles = _styles(R)
    if run_dir is not None:  # the long tables the compact views come from
        for name in ("by_composition", "coordination", "ablation", "centralized", "by_kind", "dynamic_by_team",
                     "sensitivity_ANC_REC"):
            if name not in R.tables:
                continue
            path = Path(run_dir) / "tables" / f"{name}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            R.tables[name].to_csv(path, index=False)
    return R


def sensitivity_frame(e: pd.DataFrame, P: Mapping[str, Any]) -> pd.DataFrame:
    """The episodes of ``lab:sensitivity_dyna``'s grid (:data:`.experiments.SENSITIVITY`): Pack Objects, the
    full framework and the LLM-style baselines, the ``sensitivity`` variations on ``sensitivity_teams``,
    the first ``sensitivity_tasks`` tasks, at each trigger step and zone count the grid runs (so each
    setting's cell holds the same teams and tasks; the dynamic block adds more tasks only at T = 5)."""
    vs, teams, n = list(P.get("sensitivity", [])), list(P.get("sensitivity_teams", [])), int(P.get("sensitivity_tasks", 0))
    keep = ((e["kind"] == SENSITIVITY_KIND) & e["setting"].isin(vs) & e["team"].isin(teams)
            & (e["instance"] < n) & (e["ablation_label"] == "full") & e["method_label"].isin(LLM_STYLE))
    part = e[keep]
    ok = [(T in SENSITIVITY[v][1] and z == 1) if SENSITIVITY[v][0] == "T" else (T == 5 and z in SENSITIVITY[v][1])
          for v, T, z in zip(part["setting"], part["T"], part["zones"].where(part["setting"] == "IRZ", 1))]
    return part[pd.Series(ok, index=part.index, dtype=bool)]


def unseen_frame(episodes: pd.DataFrame, P: Mapping[str, Any]) -> pd.DataFrame:
    """The unseen block's episodes (:mod:`.experiments`): DynaHMRC on static medium Pack Objects tasks
    with unseen targets and their seen twins (same places, :func:`.tasks.unseen_targets`), only pairs
    where both ran (the first ``n_tasks`` of each team); ``objects`` says which."""
    e = episode_frame(episodes, with_unseen=True)
    e = e[(e["method"] == "dynahmrc") & (e["kind"] == "pack") & (e["level"] == "medium") & (e["setting"] == "Static")
          & (e["ablation_label"] == "full") & (e["instance"] < int(P.get("n_tasks", 0)))]
    twin = e["task"].str.removesuffix("-uto") + "|" + e["run"].astype(str)
    both = twin.map(e.groupby(twin)["objects"].nunique()) == 2
    return e[both]


#: ``tab:unseen_obj`` (fine-tuned Qwen3-4B, static Pack Objects), in words.
PAPER_UNSEEN = ("The paper's unseen-object table (fine-tuned Qwen3-4B, static Pack Objects) reports success falling "
                "from 80.0% to 74.1% on targets outside the fine-tuning data, partial success holding (87.9% and "
                "87.0%) and more temporal steps (20.1 against 22.0).")


def unseen_objects(R: Report) -> Any:
    """``tab:unseen_obj`` (appendix ``lab:obj_generalization``) in words, generated from the run's
    ``unseen_objects`` table: the paper's result, then this run's. Offline the two rows are expected
    to agree: the unseen tasks are the seen ones with their targets renamed, and rule-based robots
    never read what an object is; with a model, the gap is what the paper measures (a model
    fine-tuned on this study's export has never seen those names, :mod:`.training`)."""
    from IPython.display import Markdown

    t = R.tables.get("unseen_objects")
    if t is None:
        return Markdown(PAPER_UNSEEN + " This run has no unseen-object block (it needs `unseen_objects = True` "
                        "and static medium Pack Objects tasks of DynaHMRC).")
    row = {o: r for o, r in zip(t["objects"], t.to_dict("records"))}
    seen, unseen = row["seen"], row["unseen"]
    run = (f"Here DynaHMRC succeeded in {seen['success_mean']:.1%} of {int(seen['n'])} seen tasks and "
           f"{unseen['success_mean']:.1%} of their unseen twins (partial success {seen['ps_mean']:.1%} and "
           f"{unseen['ps_mean']:.1%}; temporal steps {seen['ts_mean']:.1f} and {unseen['ts_mean']:.1f}).")
    if _offline(R):
        return Markdown(PAPER_UNSEEN + " " + run + " Offline this is no finding about generalization: the twins "
                        "differ only in the targets' names and the rule-based robots do not read what an object is; "
                        "a gap comes only from tie-breaks in the names' alphabetical order. With a model fine-tuned on this "
                        "study's export (`collablab.studies.dynahmrc.training`, which refuses unseen targets), "
                        "the same table measures what the paper's does.")
    return Markdown(PAPER_UNSEEN + " " + run + " The twins share places, difficulty and step cap, so the gap is "
                    "the targets' names alone; it measures generalization only for a model fine-tuned on this "
                    "study's export (`collablab.studies.dynahmrc.training`).")


def _offline(R: Report) -> bool:
    return {b.split(":")[0].strip() for b in R.backend.split(",")} <= OFFLINE_BACKENDS


def _findings(R: Report) -> None:
    """Every section's findings (:mod:`.findings`), the headline's three to five and the limits."""
    b = R.backend
    t = R.tables["by_difficulty"]
    R.sections["static"] = [f for m in ("DynaHMRC", "CoELA", "COHERENT") if (f := F.difficulty_fall(t, m, b))]
    R.sections["dynamic"] = [f for s in SETTINGS[1:] if (f := F.dynamic_gap(R.tables["dynamic"], s, b))]
    R.sections["centralized"] = [f for f in [F.centralized_gap(R.tables["centralized"], b)] if f]
    s = R.tables.get("search_by_types")
    R.sections["search"] = [] if s is None else [
        f for m in dict.fromkeys(s["method_label"]) if (f := F.search_team_size(s, m, b))]
    d = R.tables.get("search_dynamic")
    R.sections["search"] += [] if d is None else [
        f for m in dict.fromkeys(d["method_label"]) for v in SETTINGS[1:] if (f := F.search_under_variation(d, m, v, b))]
    sens: list[Finding | None] = []
    if "sensitivity_CTO" in R.tables:
        c = R.tables["sensitivity_CTO"]
        sens += [F.timing_disrupts(c, m, b) for m in ("COHERENT", "CoELA")] + [
            F.sensitivity_best(c, "sensitivity_CTO", None, b)]
    if "sensitivity_IRZ" in R.tables:
        sens += [F.zones_do_not_strictly_degrade(R.tables["sensitivity_IRZ"], m, b) for m in LLM_STYLE]
    if "sensitivity_ANC_REC" in R.tables:
        sens += [F.sensitivity_best(R.tables["sensitivity_ANC_REC"], "sensitivity_ANC_REC", v, b) for v in ("ANC", "REC")]
    R.sections["sensitivity"] = [f for f in sens if f is not None]
    a = R.tables["ablation_overall"]
    R.sections["ablation"] = F.ablation_drops(a, b) + [f for f in [F.leader_saves_steps(a, b)] if f]
    R.sections["election"] = [f for f in [F.election_first_round(R.tables["election"])] if f] \
        if "election" in R.tables else []
    p = R.tables.get("paired")
    R.sections["paired"] = [] if p is None else [
        f for setting in dict.fromkeys(p["setting"]) for m in METRICS if (f := F.paired_effect(p, setting, m, b))]
    R.headlines = _headlines(R)
    R.limits = F.limits(b, _offline(R), "search_by_types" in R.tables)


def _headlines(R: Report) -> list[Finding]:
    """The run's main findings: DynaHMRC against CoELA (static and dynamic success), DynaHMRC's
    success by difficulty, the largest ablation, and MCTS by team size (three to five of them)."""
    picks: list[Finding | None] = []
    for setting in ("Static", "Dynamic"):
        picks.append(next((f for f in R.sections["paired"] if f.text.startswith(f"{setting} tasks")
                           and "success rate" in f.text), None))
    picks.append(next((f for f in R.sections["static"] if f.text.startswith("DynaHMRC")), None))
    picks.append(next(iter(R.sections["ablation"]), None))
    picks.append(next((f for f in R.sections["search"] if f.text.startswith("MCTS's")), None))
    found = [f for f in picks if f is not None]
    if len(found) < 3:
        found += [f for f in R.findings() if f not in found][:3 - len(found)]
    return found[:5]


#: The figures :func:`figure` draws, by name.
FIGURES = ("difficulty", "composition", "dynamic", "sensitivity", "centralized", "coordination", "search", "ablation",
           "leaders", "paired", "unseen")


def figure(R: Report, name: str) -> Figure | None:
    """Figure ``name`` (:data:`FIGURES`) of the run, or None when its table is missing."""
    T, b = R.tables, R.backend
    if name == "difficulty":
        return plots.metric_panels(T["by_difficulty"], "level", LEVELS, backend=b, xlabel="difficulty",
                                   title="Static tasks by difficulty, mean and 95% interval (paper Fig. 5)")
    if name == "composition":
        return plots.metric_panels(T["by_composition"], "team", COMPOSITIONS, backend=b, cols=3,
                                   title="Static tasks by team composition, mean and 95% interval (paper Fig. 6)")
    if name == "dynamic":
        return plots.metric_panels(T["dynamic"], "setting", SETTINGS[1:], backend=b, xlabel="variation",
                                   title="Dynamic variations at medium difficulty, mean and 95% interval (paper Fig. 7)")
    if name == "sensitivity" and any(k.startswith("sensitivity_") for k in T):
        return plots.sensitivity_plot({v: T[k] for v, k in (("CTO", "sensitivity_CTO"), ("IRZ", "sensitivity_IRZ"),
                                                            ("ANC/REC", "sensitivity_ANC_REC")) if k in T},
                                      backend=b, title="Success by trigger step (CTO, ANC, REC) and number of zones "
                                                       "(IRZ), Pack Objects, mean and 95% interval")
    if name == "centralized":
        return plots.centralized_plot(T["centralized"], SETTINGS, backend=b,
                                      title="Decentralized DynaHMRC and centralized COHERENT by team size")
    if name == "coordination":
        return plots.coordination_plot(T["coordination"], backend=b, title="Coordination failures per episode")
    if name == "search" and "search_by_types" in T:
        return plots.search_plot(T["search_by_types"], backend=b, title="Search baselines by team size")
    if name == "ablation":
        return plots.ablation_plot(T["ablation_overall"], backend=b,
                                   title="Ablations of DynaHMRC (shaded: the full framework's interval)")
    if name == "leaders" and "leaders" in T:
        return plots.leader_plot(T["leaders"].reset_index(), backend=b, title="Elected leader by team")
    if name == "unseen" and "unseen_objects" in T:
        return plots.metric_panels(T["unseen_objects"], "objects", ("seen", "unseen"), backend=b, xlabel="targets",
                                   title="Seen and unseen target objects, static medium Pack Objects, mean and "
                                         "95% interval (paper Table unseen_obj)")
    if name == "paired" and "paired" in T:
        return plots.paired_plot(T["paired"], backend=b, title="DynaHMRC minus CoELA on matched tasks, 95% interval")
    if name not in FIGURES:
        raise KeyError(f"figure: {name!r} not allowed; allowed: {', '.join(FIGURES)}")
    return None


def llm_cost(R: Report) -> Any:
    """The LLM cost table (appendix token comparison) on a model backend; offline one sentence
    saying why there is none (the rule-based robots send no prompt, so there are no tokens)."""
    if _offline(R):
        from IPython.display import Markdown

        return Markdown("The paper's LLM cost table (calls and tokens per stage) is left out: offline the "
                        "robots follow rules and send no prompt, so there are no tokens to count.")
    return R.table("llm_cost")
