"""Notebook 06's tables in the paper's layouts and the sentences written from them
(dynahmrc.tex §4.4-4.6, appendix lab:leader_vote, lab:llm_cost, lab:comm_cost_composition,
lab:statistical_significance, lab:sensitivity).

Every table is a pure function of the episode frame (:func:`.experiments.episode_frame`); means
carry 95% percentile bootstrap CIs (``n_resamples``, 10,000 in the paper). The findings are
generated from the tables: a sentence states a direction only when the table shows it, and every
sentence starts with the backend that produced the numbers.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from ...analysis.findings import Finding, Report, lead, quote
from .difficulty import LEVELS
from .experiments import episode_frame
from .metrics import election_summary
from .robots import COMPOSITIONS
from .stats import paired_comparison, stage_cost_table, summary_table, weight_sensitivity

__all__ = ["METRICS", "read_notebook"]

METRICS = ("success", "ps", "ts", "as_per_robot", "cc")
DECENTRALIZED = ("DynaHMRC", "CoELA")


def _means(e: pd.DataFrame, by: list[str], n_resamples: int) -> pd.DataFrame:
    t = summary_table(e, by, metrics=METRICS, n_resamples=n_resamples)
    return t.round(4)


def _order(t: pd.DataFrame, col: str, order: tuple[str, ...] | list[str]) -> pd.DataFrame:
    if col in t.columns:
        t = t.assign(_o=t[col].map({v: i for i, v in enumerate(order)}).fillna(len(order))).sort_values(
            ["_o", *[c for c in t.columns if c in ("method_label",)]]).drop(columns="_o")
    return t.reset_index(drop=True)


def read_notebook(episodes: pd.DataFrame, steps: pd.DataFrame, P: Mapping[str, Any]) -> Report:
    """Every table and finding of notebook 06 from its run."""
    e = episode_frame(episodes)
    backend = ", ".join(sorted(set(e["backend"])))
    R = Report(backend, len(e))
    nr = int(P.get("n_resamples", 10_000))
    static = e[(e["setting"] == "Static") & (e["ablation_label"] == "full")]
    dyn = e[(e["setting"] != "Static") & (e["ablation_label"] == "full")]
    R.tables["by_difficulty"] = _order(_means(static, ["method_label", "level"], nr), "level", LEVELS)
    R.tables["by_composition"] = _order(_means(static, ["method_label", "team"], nr), "team", COMPOSITIONS)
    R.tables["by_kind"] = _means(static, ["method_label", "kind", "level"], nr)
    R.tables["dynamic"] = _means(dyn[~dyn["method"].str.contains("mcts")], ["method_label", "setting"], nr)
    cen = e[(e["ablation_label"] == "full") & e["method"].isin(["dynahmrc", "coherent"])]
    R.tables["centralized"] = _means(cen, ["method_label", "n_types", "setting"], nr)
    levels = list(P.get("ablation_levels", ["medium"]))
    abl = e[(e["method"] == "dynahmrc") & (e["level"].isin(levels) | (e["setting"] != "Static"))]
    R.tables["ablation"] = _means(abl, ["ablation_label", "setting"], nr)
    R.tables["ablation_overall"] = _means(abl, ["ablation_label"], nr).sort_values("success_mean").reset_index(drop=True)
    search = e[e["method"].str.contains("mcts")]
    if len(search):
        R.tables["search"] = _order(_means(search, ["method_label", "team"], nr), "team", COMPOSITIONS)
        R.tables["search_by_types"] = _means(search, ["method_label", "n_types"], nr)
    elect = e[(e["method"] == "dynahmrc") & (e["ablation_label"].isin(["full", "50% random votes"]))
              & (e["election_rounds"] > 0)]
    if len(elect):
        es = election_summary(elect[elect["ablation_label"] == "full"])
        R.tables["election"] = pd.DataFrame([{"first_round": es.first_round, "within_two": es.within_two,
                                              "referee": es.referee}])
        R.tables["leaders"] = es.leader_shares.round(3)
    coord = e[(e["ablation_label"] == "full") & ~e["method"].str.contains("mcts")]
    R.tables["coordination"] = coord.groupby(["method_label", "setting"])[["redundant", "conflicting",
                                                                            "invalid_actions"]].mean().round(3) \
        .reset_index()
    R.tables["llm_cost"] = stage_cost_table(coord, ["method_label", "setting"]).round(2)
    pairs = []
    for setting, part in (("Static", static), ("Dynamic", dyn)):
        part = part[part["method_label"].isin(DECENTRALIZED)]
        if part["method_label"].nunique() == 2:
            t = paired_comparison(part, method_col="method_label", a="CoELA", b="DynaHMRC",
                                  pair_on=["task", "variation", "run"], metrics=METRICS, n_resamples=nr)
            pairs.append(t.assign(setting=setting))
    if pairs:
        R.tables["paired"] = pd.concat(pairs, ignore_index=True)
    pack = static[(static["method"] == "dynahmrc") & (static["kind"] == "pack")]
    if pack["task"].nunique() >= 4:
        tasks = pack.groupby("task").agg(L=("L", "first"), N=("N", "first"), Y=("Y", "first"), ps=("ps", "mean"),
                                         ts=("ts", "mean")).reset_index()
        R.tables["weight_sensitivity"] = weight_sensitivity(tasks).round(3)
    _findings(R)
    for name, t in R.tables.items():
        if "backend" not in t.columns:
            R.tables[name] = t.assign(backend=backend)
    return R


def _f(R: Report, claim: str, parts: list[Any], shown: bool | None) -> Finding:
    """A finding from text pieces and quotes (a quote prints its own text)."""
    quotes = tuple(p for p in parts if not isinstance(p, str))
    text = "".join(p if isinstance(p, str) else p.text for p in parts)
    return Finding(claim, lead(R.backend, text), shown, quotes)


PCT = "{:.1%}"


def _findings(R: Report) -> None:
    t = R.tables["by_difficulty"]
    static = []
    for m in dict.fromkeys(t["method_label"]):
        q = {lv: quote(t, "by_difficulty", {"method_label": m, "level": lv}, "success_mean", PCT) for lv in LEVELS}
        if all(q.values()):
            falls = q["easy"].value > q["medium"].value > q["hard"].value
            static.append(_f(R, "SUCC falls as difficulty grows (fig:robodiff)",
                             [f"{m}: SUCC {'falls' if falls else 'does not fall monotonically'} with difficulty "
                              "(easy ", q["easy"], ", medium ", q["medium"], ", hard ", q["hard"], ")"
                              + ("." if falls else f"; the {R.backend} backend does not show the paper's steady fall.")],
                             falls))
    R.sections["static"] = static
    a = R.tables["ablation_overall"]
    abl = []
    if "full" in set(a["ablation_label"]) and len(a) > 1:
        full = float(a.loc[a["ablation_label"] == "full", "success_mean"].iloc[0])
        d = a.assign(drop=full - a["success_mean"])
        R.tables["ablation_drop"] = d[["ablation_label", "success_mean", "drop"]].reset_index(drop=True)
        rest = d[d["ablation_label"] != "full"]
        worst = str(rest.loc[rest["drop"].idxmax(), "ablation_label"])
        qf = quote(R.tables["ablation_drop"], "ablation_drop", {"ablation_label": "full"}, "success_mean", PCT)
        qw = quote(R.tables["ablation_drop"], "ablation_drop", {"ablation_label": worst}, "success_mean", PCT)
        abl.append(_f(R, "removing feedback lowers SUCC the most (tab:ablation)",
                      ["the largest SUCC drop from the full framework (", qf, f") is {worst} (", qw, ")."],
                      worst == "w/o feedback"))
        for label in ("w/o history", "w/o leader", "w/o reflection"):
            q = quote(R.tables["ablation_drop"], "ablation_drop", {"ablation_label": label}, "success_mean", PCT)
            if q is None:
                continue
            lower = q.value < qf.value
            abl.append(_f(R, f"{label} lowers SUCC (tab:ablation)",
                          [f"{label}: SUCC ", q, " against ", qf, " for the full framework"
                           + ("." if lower else f"; the {R.backend} backend does not show the paper's drop.")],
                          lower))
        t = R.tables["ablation_overall"]
        qa = quote(t, "ablation_overall", {"ablation_label": "full"}, "as_per_robot_mean", "{:.1f}")
        qn = quote(t, "ablation_overall", {"ablation_label": "w/o leader"}, "as_per_robot_mean", "{:.1f}")
        if qa is not None and qn is not None:
            fewer = qa.value < qn.value
            abl.append(_f(R, "the leader reduces action steps (tab:ablation)",
                          ["with the leader each robot takes ", qa, " action steps (AS) against ", qn, " without"
                           + ("." if fewer else f"; the {R.backend} backend does not show the paper's saving.")],
                          fewer))
    R.sections["ablation"] = abl
    search = []
    if "search_by_types" in R.tables:
        s = R.tables["search_by_types"]
        for m in dict.fromkeys(s["method_label"]):
            part = s[s["method_label"] == m].sort_values("n_types")
            qs = [quote(s, "search_by_types", {"method_label": m, "n_types": n}, "success_mean", PCT)
                  for n in part["n_types"]]
            v = [q.value for q in qs]
            falls = len(v) > 1 and v[0] > v[-1]
            steady = falls and all(x >= y for x, y in zip(v, v[1:]))
            word = "falls steadily" if steady else "falls" if falls else "does not fall"
            pieces: list[Any] = [f"{m}: SUCC {word} from the smallest to the largest team ("]
            for k, (n, q) in enumerate(zip(part["n_types"], qs)):
                pieces += [("" if k == 0 else ", ") + f"{int(n)} types ", q]
            tail = "." if falls else f"; the {R.backend} backend does not show the paper's fall."
            search.append(_f(R, "search success falls as the team grows (fig:robocomb)", pieces + [")" + tail], falls))
    R.sections["search"] = search
    paired = []
    if "paired" in R.tables:
        p = R.tables["paired"]
        for r in p.itertuples():
            where = {"setting": r.setting, "metric": r.metric}
            qd = quote(p, "paired", where, "mean_diff", "{:+.3f}")
            qp = quote(p, "paired", where, "p_value", "{:.3f}")
            if qd is None or qp is None:
                continue
            paired.append(_f(R, "DynaHMRC differs from CoELA (tab:statistical_comparison)",
                             [f"{r.setting}: DynaHMRC minus CoELA on {r.metric}: ", qd, " (paired t-test p = ", qp,
                              ")."], None))
    R.sections["paired"] = paired
    election = []
    if "election" in R.tables:
        el = R.tables["election"].assign(row=0)
        R.tables["election"] = el
        q1 = quote(el, "election", {"row": 0}, "first_round", PCT)
        q2 = quote(el, "election", {"row": 0}, "within_two", PCT)
        q3 = quote(el, "election", {"row": 0}, "referee", PCT)
        election.append(_f(R, "most elections end in the first round (lab:leader_vote)",
                           [q1, " of elections end in the first round, ", q2, " within two, ", q3,
                            " go to the referee."], None))
    R.sections["election"] = election
