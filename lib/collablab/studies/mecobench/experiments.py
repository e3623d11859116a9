"""The MECoBench notebooks' experiments: from a notebook's parameters (``P``, as
:func:`collablab.runs.notebook_parameters` reads them) to the specs it runs, the run itself,
and what the notebook says about it (:func:`read_notebook`: its tables and findings).

Every parameter reaches the run manifest (``params``); the notebooks only call these and the
tables of :mod:`.tables`. A notebook's ``budget`` parameter goes into every spec; None (the
default) runs each spec with the paper's budget for its structure and prior (:func:`.episode.default_budget`).

:func:`run_notebook` checks every parameter first (:func:`check_parameters`: one line naming the
parameter and its allowed values) and the model endpoints next, before the task suite is loaded
(generating it takes half a minute) or any episode runs.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...protocols import PROTOCOLS
from ...runs import check_run_parameters, llm_option_keys, parameter_checks, preflight_endpoints
from ...runs.spec_checks import check_choice, check_int, check_items
from . import findings as F
from . import tables as T
from .headlines import Contrast, contrast_table, headline_findings
from .episode import default_budget
from .grids import check_team_sizes, grid, run, team_spec
from .spec import DEFAULTS, endpoints, resolve, task_of
from .styles import styles
from .suite import suite_plan
from .tasks import PRIORS, TaskError

Params = dict[str, Any]


def _team(P: Params, who: str | None = None, profile: str | None = None) -> dict[str, Any]:
    """The team keys for ``who`` (a profile, or model names for LLM backends), ``profile`` (a
    profile with P's model) or P's profile; with P's endpoint keys (``api_key_env``, ``llm_options``)."""
    model = P["model"] if who is None else who
    profile = who if who is not None else P["profile"] if profile is None else profile
    return team_spec(P["backend"], profile, model, P["base_url"], P["provider"], P["llm_cache_mode"],
                     P.get("api_key_env"), P.get("llm_options"))


def _grid(structure: str, P: Params, axes: dict[str, list[Any]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """:func:`.grids.grid` with P's ``budget`` in every spec when it is set (None: each spec runs with
    the paper's budget for its structure and prior, :func:`.episode.default_budget`)."""
    specs = grid(structure, P["n_tasks"], axes, base)
    if P.get("budget") is not None:
        for s in specs:
            s["budget"] = P["budget"]
    return specs


def _task_takes(spec: dict[str, Any]) -> bool:
    """Whether the spec's task runs with its team size (a sequential task needs one agent per zone)."""
    s = resolve(spec)
    try:
        task_of(s).check_team(s["n_agents"])
    except TaskError:
        return False
    return True


def _run(name: str, specs: list[dict[str, Any]], P: Params) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    return run(name, specs, P, workers=P["workers"], run_id=P["run_id"] or None)


def collaboration_specs(P: Params) -> list[dict[str, Any]]:
    """Notebook 01 (§4, Tables 8-11): parallel team sizes with and without communication, and
    two-agent sequential teams with and without communication."""
    base = dict(_team(P), prior=P["prior"])
    sizes = check_team_sizes(P["team_sizes"])
    return (_grid("parallel", P, {"n_agents": sizes, "protocol": ["broadcast", "isolated"], "seed": P["seeds"]}, base)
            + _grid("sequential", P, {"n_agents": [2], "protocol": ["broadcast", "isolated"], "seed": P["seeds"]}, base))


def modes_specs(P: Params) -> list[dict[str, Any]]:
    """Notebook 02 (§5): every protocol with two agents, leader vs broadcast as teams grow, shared
    memory vs broadcast at the ``memory_sizes`` (Figs. 10, 31) on both structures (sequential tasks
    only at the team sizes they take: one agent per zone), and mixed leader/worker teams (leader
    first)."""
    base = dict(_team(P), prior=P["prior"])
    modes = [s for st in ("parallel", "sequential")
             for s in _grid(st, P, {"n_agents": [2], "protocol": P["protocols"], "seed": P["seeds"]}, base)]
    scaling = _grid("parallel", P, {"n_agents": check_team_sizes(P["scaling_sizes"]),
                                    "protocol": ["broadcast", "leader"], "seed": P["seeds"]}, base)
    memory = [s for st in ("parallel", "sequential")
              for s in _grid(st, P, {"n_agents": check_team_sizes(P["memory_sizes"]),
                                     "protocol": ["broadcast", "shared_memory"], "seed": P["seeds"]}, base)
              if _task_takes(s)]
    mixed = [dict(s, **_team(P, mt)) for mt in P["mixed_teams"]
             for s in _grid("parallel", P, {"n_agents": [2], "protocol": ["leader"], "seed": P["seeds"]},
                            dict(prior=P["prior"]))]
    return modes + scaling + memory + mixed


def priors_specs(P: Params) -> list[dict[str, Any]]:
    """Notebook 03 (§6.1, Tables 3, 13-16): every prior variant x team size, broadcast, each prior
    with its budget (the paper's 60 or 80 steps unless ``budget`` is set)."""
    return _grid("parallel", P, {"prior": P["priors"], "n_agents": check_team_sizes(P["team_sizes"]),
                                 "seed": P["seeds"]}, dict(_team(P), protocol="broadcast"))


def behaviours_specs(P: Params) -> list[dict[str, Any]]:
    """Notebook 04 (§4.3, §6.2): each capability profile (heuristic; one model otherwise) over team
    sizes on parallel tasks and with two agents on sequential tasks."""
    who = P["profiles"] if P["backend"] == "heuristic" else P["profiles"][:1]
    teams = [_team(P, profile=p) for p in who]
    axes = {"n_agents": check_team_sizes(P["team_sizes"]), "seed": P["seeds"]}
    base = dict(protocol=P["protocol"], prior=P["prior"])
    specs = [dict(s, **t) for t in teams for s in _grid("parallel", P, axes, base)]
    specs += [dict(s, **t) for t in teams for s in _grid("sequential", P, dict(axes, n_agents=[2]), base)]
    return specs


SPECS = {"01_collaboration": collaboration_specs, "02_modes": modes_specs, "03_priors": priors_specs,
         "04_behaviours": behaviours_specs}
#: The team-size lists of the notebooks' parameters.
SIZE_PARAMETERS = ("team_sizes", "scaling_sizes", "memory_sizes")


def _probes(name: str, P: Params) -> list[tuple[str, dict[str, Any]]]:
    """``(parameter, spec)`` for every team notebook ``name`` builds at every team size it runs it
    (task id a placeholder: nothing here reads the suite). The parameter is what an error names
    when the team is one of a list (``profiles``, ``mixed_teams``)."""
    sizes = {n for key in SIZE_PARAMETERS if key in P for n in P[key]}
    sizes = sorted(sizes if name == "03_priors" else sizes | {2})  # 01, 02, 04 also run two-agent teams
    if name == "04_behaviours":
        who = P["profiles"] if P["backend"] == "heuristic" else P["profiles"][:1]
        teams = [("profiles", _team(P, profile=p), sizes) for p in who]
    else:
        teams = [("", _team(P), sizes)]
    if name == "02_modes":
        teams += [("mixed_teams", _team(P, mt), [2]) for mt in P["mixed_teams"]]
    return [(where, {**team, "task_id": "(any)", "n_agents": n, "protocol": "isolated"})
            for where, team, ns in teams for n in ns]


def check_parameters(name: str, P: Params) -> None:
    """Check every parameter of MECoBench notebook ``name`` before anything runs (the suite
    included); ValueError naming the parameter and its allowed values (:func:`run_notebook` raises it
    as ``ParameterError``)."""
    if name not in SPECS:
        raise ValueError(f"name: {name!r} is not a MECoBench notebook; allowed: {', '.join(SPECS)}")
    check_run_parameters(P, llm_option_keys(DEFAULTS))
    n_suite = len(suite_plan())
    if isinstance(P["n_tasks"], bool) or not isinstance(P["n_tasks"], int) or not 1 <= P["n_tasks"] <= n_suite:
        raise ValueError(f"n_tasks: must be an integer from 1 to {n_suite} (the tasks of each structure in our "
                         f"suite), got {P['n_tasks']!r}")
    for key in SIZE_PARAMETERS:
        if key in P:
            check_team_sizes(P[key], key)
    check_items(P, "seeds", low=0)
    check_int(P, "budget", 1, allow_none=True)
    for key, allowed in (("prior", PRIORS), ("protocol", tuple(PROTOCOLS))):
        if key in P:
            check_choice(P, key, allowed)
    for key, allowed in (("priors", PRIORS), ("protocols", tuple(PROTOCOLS)), ("profiles", None),
                         ("mixed_teams", None)):
        if key in P:
            check_items(P, key, allowed)
    for where, probe in _probes(name, P):
        try:
            resolve(probe)  # the team's keys at each size (profile, model, base_url, api_key_env, llm_options ...)
        except ValueError as e:
            raise ValueError(f"{where}: {e}" if where else str(e)) from None


def run_notebook(name: str, P: Params) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Run (or resume) notebook ``name``'s grid; ``(episodes, steps, run folder)``. Bad parameters and
    endpoints raise ``ParameterError`` before the suite is loaded or any episode runs."""
    with parameter_checks():
        check_parameters(name, P)
        preflight_endpoints(e for _, probe in _probes(name, P) for e in endpoints(probe))
        specs = SPECS[name](P)
    return _run(name, specs, P)


# -- what each notebook says: its tables and the findings written from them ---------------------------
#: How each agent pipeline reads (agents.llm.policy, issue 29): said beside the backend.
PIPELINE_WORDS = {
    "paper": "the paper's agent pipeline (no object ids shown, Table 7's actions only, ids resolved by the model "
             "decoder, no re-ask)",
    "assisted": "the assisted pipeline (ids shown, rule grounding first, action aliases, one re-ask): not the "
                "paper's agent",
}


def pipeline_sentence(episodes: pd.DataFrame) -> str:
    """"LLM agents ran ..." for the pipelines the run's LLM episodes name; "" when none did."""
    pipes = sorted(episodes["pipeline"].dropna().unique(), key=lambda p: (p != "paper", p)) if "pipeline" in episodes else []
    return ("LLM agents ran " + " and ".join(PIPELINE_WORDS.get(p, p) for p in pipes) + ".") if pipes else ""


def _report(episodes: pd.DataFrame) -> F.Report:
    return F.Report(F.backend_of(episodes), len(episodes), agents=pipeline_sentence(episodes))


def _limits(R: F.Report, P: Params) -> list[str]:
    """What the run does not show: its scale (episodes in the cells the headline compares, the SR
    difference their intervals can tell apart) and how many of the paper's effects it does not show
    or has too few units for."""
    counts = [int(c) for c in R.tables["contrasts"]["fewest cases"].dropna()]
    out = []
    if counts:
        n = int(pd.Series(counts).median())
        lo, hi = T.wilson(n / 2, n)
        out.append(f"A compared cell typically holds {n} episodes ({P['n_tasks']} tasks per structure, {len(P['seeds'])} "
                   f"seed{'s' if len(P['seeds']) > 1 else ''}), so two SRs near 50% must differ by about "
                   f"{round(float(hi - lo) / 2 * 2 ** 0.5 * 100)} percentage points to be told apart.")
    no, few = (sum(f.shown is v for f in R.findings()) for v in (False, None))
    if no:
        out.append(f"It does not show {no} of the paper's effects (under \"Not shown by this run\" at the end).")
    if few:
        which = "more" if no else "of the paper's effects"
        out.append(f"For {few} {which} it has too few units to tell.")
    return out


def _finish(R: F.Report, P: Params, run_dir: Any, contrasts: list[Contrast]) -> F.Report:
    """Set the report's display styles, run folder, headline findings (one per contrast the run
    has, from the ``contrasts`` table) and limits."""
    R.tables["contrasts"] = contrast_table(R.tables, contrasts)
    R.styles = styles(*R.tables)
    R.run_dir = run_dir
    R.headlines = headline_findings(R.tables["contrasts"])
    R.limits = _limits(R, P)
    return R


def _best_smaller(t: pd.DataFrame, where: dict[str, Any]) -> tuple[int, int] | None:
    """(largest team size, the smaller size with the highest SR) among the rows ``where`` selects."""
    rows = F.select_rows(t, where)
    if rows["n_agents"].nunique() < 2:
        return None
    top = int(rows["n_agents"].max())
    smaller = rows[rows.n_agents < top]
    return top, int(smaller.loc[smaller["SR"].idxmax(), "n_agents"])


def collaboration_report(episodes: pd.DataFrame, steps: pd.DataFrame, P: Params, run_dir: Any = None) -> F.Report:
    """Notebook 01: Tables 8, 9, 11 and the object-count trends (Figs. 7b, 36)."""
    R = _report(episodes)
    prior = P["prior"]
    R.tables.update(table8=T.table8(episodes), scaling=T.scaling_table(episodes), table9=T.table9(episodes),
                    table11=T.table11(episodes))
    R.tables["objects"] = pd.concat([T.objects_table(episodes, st, "broadcast", prior) for st in ("parallel", "sequential")],
                                    ignore_index=True)
    R.tables["trends"] = T.objects_trends(R.tables["objects"])
    par = {"structure": "parallel", "prior": prior}
    R.sections["table8"] = [F.second_agent_gain(R.tables["table8"])]
    R.sections["scaling"] = [F.inverted_u(R.tables["scaling"], {**par, "protocol": "broadcast"}),
                             F.communication_helps(R.tables["scaling"], par),
                             F.communication_gap_widens(R.tables["scaling"], par)]
    R.sections["table11"] = [F.communication_by_structure(R.tables["table11"]),
                             F.handover_failures_without_communication(R.tables["table11"])]
    R.sections["objects"] = [F.objects_decline(R.tables["trends"], par),
                             F.objects_robust(R.tables["trends"], par),
                             F.objects_decline(R.tables["trends"], {"structure": "sequential", "prior": prior},
                                               figure="Fig. 36")]
    bc = {**par, "protocol": "broadcast"}
    contrasts = [Contrast("Two agents vs one on parallel tasks", "table8", {"n_agents": 2}, {"n_agents": 1},
                          "a second agent raises SR", "Fig. 6, Table 8", where={"structure": "parallel"}),
                 Contrast("Broadcast vs isolated agents, 2 agents on sequential tasks", "table11",
                          {"protocol": "broadcast"}, {"protocol": "isolated"}, "communication raises SR",
                          "Fig. 9a, Table 11", where={"structure": "sequential"})]
    if (sizes := _best_smaller(R.tables["scaling"], bc)) is not None:
        top, best = sizes
        contrasts += [Contrast(f"Broadcast vs isolated agents, {top} agents on parallel tasks", "scaling",
                               {"protocol": "broadcast"}, {"protocol": "isolated"}, "communication raises SR",
                               "Fig. 9b, Table 9", where={**par, "n_agents": top}),
                      Contrast(f"{top} agents vs {best} (the best smaller team) on parallel tasks", "scaling",
                               {"n_agents": top}, {"n_agents": best}, "SR falls past the best team size",
                               "Fig. 7a, Table 9", sign=-1, where=bc)]
    return _finish(R, P, run_dir, contrasts)


def modes_report(episodes: pd.DataFrame, steps: pd.DataFrame, P: Params, run_dir: Any = None) -> F.Report:
    """Notebook 02: Table 12 / Fig. 8a (2 agents), leader scaling (Fig. 8b), shared memory (Figs.
    10, 31), mixed leader teams (Fig. 32) and false completions per protocol (Table 22)."""
    from ...analysis import failure_indicators

    mine = episodes[T.same_team(episodes, P["backend"], P["profile"], P["model"])]
    who = T.team_column(P["backend"])
    par = mine[mine.structure == "parallel"]
    mixed = episodes[(episodes.protocol == "leader") & episodes[who].isin(P["mixed_teams"])
                     & (episodes.structure == "parallel") & (episodes.n_agents == 2)]
    two = mine[mine.n_agents == 2]
    ind = failure_indicators(two, steps[steps.episode_id.isin(two.episode_id)])
    R = _report(episodes)
    R.tables.update(modes=T.modes_table(mine), scaling=T.scaling_table(par[par.protocol.isin(["broadcast", "leader"])]),
                    memory=T.memory_table(mine), mixed=T.team_table(mixed, who),
                    failures=T.failure_rates(ind, ["protocol"], ["false_completion"]))
    R.sections["modes"] = [F.protocol_ranking(R.tables["modes"], st) for st in ("parallel", "sequential")]
    R.sections["leader_scaling"] = [F.leader_scaling(R.tables["scaling"], {"structure": "parallel", "prior": P["prior"]})]
    R.sections["memory"] = [F.shared_memory_vs_broadcast(R.tables["memory"], "parallel"),
                            F.shared_memory_vs_broadcast(R.tables["memory"], "sequential"),
                            F.shared_memory_progress(R.tables["memory"], "parallel"),
                            F.memory_tokens(R.tables["memory"], "parallel")]
    mt = list(P["mixed_teams"])
    R.sections["mixed"] = ([F.mixed_leader(R.tables["mixed"], who, mt[0], mt[1], mt[2])] if len(mt) == 3 else [])
    R.sections["failures"] = [F.false_completions(R.tables["failures"], "protocol")]
    two = {"n_agents": 2}
    contrasts = [Contrast("Leader vs broadcast, 2 agents on parallel tasks", "modes", {"protocol": "leader"},
                          {"protocol": "broadcast"}, "a leader beats broadcast", "Fig. 8a, Table 12",
                          where={"structure": "parallel"}),
                 Contrast("Isolated agents vs broadcast, 2 agents on sequential tasks", "modes",
                          {"protocol": "isolated"}, {"protocol": "broadcast"}, "isolated agents fall below broadcast",
                          "Fig. 9a, Table 12", sign=-1, where={"structure": "sequential"}),
                 Contrast("Shared memory vs broadcast, 2 agents on parallel tasks", "memory",
                          {"protocol": "shared_memory"}, {"protocol": "broadcast"}, "shared memory raises SR there",
                          "Figs. 10, 31", where={"structure": "parallel", **two}),
                 Contrast("Shared memory vs broadcast, 2 agents on sequential tasks", "memory",
                          {"protocol": "shared_memory"}, {"protocol": "broadcast"}, "shared memory lowers SR there",
                          "Figs. 10, 31", sign=-1, where={"structure": "sequential", **two})]
    if len(mt) == 3:
        contrasts.append(Contrast(f"A strong leader with a weak worker ({mt[1]}) vs {mt[0]}", "mixed", {who: mt[1]},
                                  {who: mt[0]}, "a strong leader lifts the team", "Fig. 32"))
    return _finish(R, P, run_dir, contrasts)


def priors_report(episodes: pd.DataFrame, steps: pd.DataFrame, P: Params, run_dir: Any = None) -> F.Report:
    """Notebook 03: budgets, Tables 13-16 (long, and SR by prior and team size), Table 3 and the
    no-location scaling and object trends (Figs. 13, 34, 36)."""
    R = _report(episodes)
    R.tables.update(priors=T.priors_table(episodes), scaling=T.scaling_table(episodes))
    R.tables["priors_sr"] = T.wide(R.tables["priors"], "prior", "n_agents", label=lambda n: f"SR, {n} agent{'s' if n > 1 else ''}")
    t3 = T.table3_long(episodes)
    if t3 is not None:
        R.tables["table3"] = t3
    priors = list(dict.fromkeys(episodes.prior))
    R.tables["objects"] = pd.concat([T.objects_table(episodes, "parallel", "broadcast", p) for p in priors],
                                    ignore_index=True)
    R.tables["trends"] = T.objects_trends(R.tables["objects"])
    R.tables["slopes"] = T.wide(R.tables["trends"], "prior", "n_agents", ["slope"],
                                label=lambda k: f"{k} agent{'s' if k > 1 else ''}")
    n = 2 if 2 in set(episodes.n_agents) else int(episodes.n_agents.min())
    R.sections["budgets"] = [F.budgets_used(R.tables["priors"], {p: default_budget("parallel", p) for p in priors})]
    R.sections["priors"] = [F.prior_ablation(R.tables["priors"], p, n) for p in priors if p != "full"]
    R.sections["table3"] = [F.gain_under_missing_priors(t3), F.largest_gain_prior(t3)]
    nl = {"structure": "parallel", "prior": missing_location_prior(priors)}
    R.sections["no_location"] = [F.inverted_u(R.tables["scaling"], {**nl, "protocol": "broadcast"},
                                              figure="Fig. 13a, Table 15"),
                                 F.objects_decline(R.tables["trends"], nl, figure="Fig. 36"),
                                 F.objects_robust(R.tables["trends"], nl, figure="Fig. 34b")]
    n2 = {"n_agents": n}
    contrasts = [Contrast(f"{n} agents, {F.PRIOR_LABELS.get(p, p)} vs full priors", "priors", {"prior": p},
                          {"prior": "full"}, "noisy locations cost SR" if p in F.NOISY else "missing locations cost SR",
                          "Tables 3, 16" if p in F.NOISY else "Table 13, Fig. 35", sign=-1, where=n2)
                 for p in ("no_location", "none", "noisy") if p in priors]
    contrasts += [Contrast(f"Two agents vs one with {F.PRIOR_LABELS.get(p, p)}", "priors", {"n_agents": 2}, {"n_agents": 1},
                           "a second agent helps without location priors", "Fig. 12, Table 3", where={"prior": p})
                  for p in F.NO_LOCATION[:1] if p in priors]
    return _finish(R, P, run_dir, contrasts)


def missing_location_prior(priors: list[str]) -> str:
    """The prior that notebook 03's no-location section reads (Figs. 13, 34, 36): ``no_location``,
    else ``none``, else the run's first prior (its sentences then say what the run lacks)."""
    return next((p for p in (*F.NO_LOCATION, *priors) if p in priors), "no_location")


def behaviours_report(episodes: pd.DataFrame, steps: pd.DataFrame, P: Params, run_dir: Any = None) -> F.Report:
    """Notebook 04: coordination queries (Table 18), correction (Tables 19-20), failure modes and
    self-correction by profile (§6.2, Table 22, Fig. 37), HFR by profile (Tables 11-12)."""
    from ...analysis import coord_query_table, correction_analysis, failure_indicators, failure_lift, tag_messages

    ind = failure_indicators(episodes, steps)
    R = _report(episodes)
    R.tables.update(table18=coord_query_table(ind, by="structure").reset_index().assign(backend=R.backend),
                    table19=correction_analysis(ind, by="structure").table19.reset_index().assign(backend=R.backend),
                    failures=T.failure_rates(ind, ["profile"]), corrections=T.correction_rates(ind, "profile"),
                    profiles=T.metric_table(episodes, ["structure", "profile"]),
                    flags=T.sr_with_without(ind, ["false_completion", "dup_grab"]),
                    lift=failure_lift(ind, by="profile"),
                    messages=T.message_examples(tag_messages(steps), BEHAVIOURS))
    structures = sorted(set(episodes.structure))
    order = [p for p in P["profiles"] if p in set(episodes.profile)]
    R.sections["coord"] = [F.coordination_queries(R.tables["table18"], st) for st in structures]
    R.sections["correction"] = [F.correction_effect(R.tables["table19"], st) for st in structures]
    R.sections["failures"] = [F.false_completions(R.tables["failures"], "profile"),
                              F.wrong_grabs_by_profile(R.tables["failures"], order),
                              F.dup_grabs_by_profile(R.tables["failures"], order),
                              F.false_completions_by_profile(R.tables["failures"], order),
                              F.handover_failures_by_profile(R.tables["profiles"], order),
                              F.self_correction_by_profile(R.tables["corrections"], order)]
    flag = [Contrast(f"Episodes with vs without {what}", "flags", {"has": True}, {"has": False}, effect, ref,
                     sign=-1, where={"indicator": name})
            for name, what, effect, ref in (
                ("false_completion", "a false completion", "false completions are destructive", "§6.2, Table 22"),
                ("dup_grab", "a duplicate grab", "duplicate grabs come with failures", "§6.2, Fig. 37"))]
    if len(order) > 1:
        flag.append(Contrast(f"The {order[0]} vs the {order[-1]} profile on parallel tasks", "profiles",
                             {"profile": order[0]}, {"profile": order[-1]}, "the stronger profile solves more tasks",
                             "Table 8", where={"structure": "parallel"}))
    if len(order) > 1 and ind["wrong_grab"].any():
        flag.append(Contrast(f"Episodes with a wrong grab, {order[-1]} vs {order[0]} profile", "failures",
                             {"profile": order[-1]}, {"profile": order[0]}, "weaker grounding brings more wrong grabs",
                             "App. D.5, Table 21", col="rate", where={"indicator": "wrong_grab"}, name="share"))
    return _finish(R, P, run_dir, flag)


#: The behaviour codes of Tables 2 and 17 that notebook 04 shows one message of.
BEHAVIOURS = ("Info-Plan", "Info-Loc", "Info-Obj", "Act-Del", "Task-Assign", "Coord-Q", "Correct")


READERS = {"01_collaboration": collaboration_report, "02_modes": modes_report, "03_priors": priors_report,
           "04_behaviours": behaviours_report}


def read_notebook(name: str, episodes: pd.DataFrame, steps: pd.DataFrame, P: Params, run_dir: Any = None) -> F.Report:
    """Notebook ``name``'s result tables and the findings written from them (a :class:`.findings.Report`
    with display styles, headline findings and limits; each displayed table's CSV goes to ``run_dir``)."""
    if name not in READERS:
        raise ValueError(f"name: {name!r} is not a MECoBench notebook; allowed: {', '.join(READERS)}")
    return READERS[name](episodes, steps, P, run_dir)
