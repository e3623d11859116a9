"""MECoBench's result tables in the paper's layouts (§3.2 metrics per group, Tables 8-16,
Fig. 7b) from episode records; pure functions of the records."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import metrics

METRIC_COLUMNS = ["SR", "CR", "AUC", "DOL", "CAR", "HFR", "SpatialErr", "TokensPerStep"]


def metric_table(episodes: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """MECoBench metrics (§3.2) per group, with the number of cases and the backend."""
    rows = []
    for key, g in episodes.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        s = metrics.summary(g.to_dict("records"))
        rows.append({**dict(zip(by, key)), "cases": int(s.pop("n")), **s,
                     "backend": ",".join(sorted(g["backend"].unique()))})
    return pd.DataFrame(rows)


def by_objects(episodes: pd.DataFrame, by: str = "n_agents") -> pd.DataFrame:
    """SR and CR by number of target objects and ``by`` (Table 10 / Fig. 7b)."""
    t = episodes.groupby(["n_subgoals", by]).agg(SR=("success", "mean"), CR=("cr", "mean"),
                                                 cases=("success", "size")).reset_index()
    return t.rename(columns={"n_subgoals": "objects"})


def fitted_trends(table: pd.DataFrame, by: str = "n_agents", y: str = "SR") -> pd.DataFrame:
    """Least-squares line of ``y`` on the object count per group (Fig. 7b's trend lines)."""
    rows = []
    for key, g in table.groupby(by):
        if g["objects"].nunique() < 2:
            rows.append({by: key, "slope": float("nan"), "intercept": float("nan")})
            continue
        slope, intercept = np.polyfit(g["objects"], g[y], 1)
        rows.append({by: key, "slope": float(slope), "intercept": float(intercept)})
    return pd.DataFrame(rows)


def wide(table: pd.DataFrame, index: str, columns: str, values: Sequence[str]) -> pd.DataFrame:
    """Paper-style wide layout, e.g. rows = team size, columns = protocol x metric."""
    return table.pivot_table(index=index, columns=columns, values=list(values)).round(3)


# -- the notebooks' tables and figures (each a pure function of the records) -----------------------
def table8(episodes: pd.DataFrame) -> pd.DataFrame:
    """Table 8: one vs two agents with broadcast, per structure."""
    sel = episodes[(episodes.protocol == "broadcast") & episodes.n_agents.isin([1, 2])]
    t = metric_table(sel, ["structure", "n_agents"])
    return t[["structure", "n_agents", "cases", "SR", "CR", "AUC", "HFR", "backend"]].round(3)


def table9(episodes: pd.DataFrame) -> pd.DataFrame:
    """Table 9: parallel tasks, team size x protocol (SR, CR, AUC, CAR)."""
    par = episodes[episodes.structure == "parallel"]
    return wide(metric_table(par, ["n_agents", "protocol"]), "n_agents", "protocol", ["SR", "CR", "AUC", "CAR"])


def table10(episodes: pd.DataFrame) -> pd.DataFrame:
    """Table 10 / Fig. 7b data: SR and CR by number of objects and team size (parallel, broadcast)."""
    return by_objects(episodes[(episodes.structure == "parallel") & (episodes.protocol == "broadcast")], "n_agents")


def objects_plot(t10: pd.DataFrame, title: str) -> Any:
    """Fig. 7b: SR against the number of objects with a least-squares line per team size."""
    import seaborn as sns

    g = sns.lmplot(data=t10, x="objects", y="SR", hue="n_agents", ci=None, height=3.5, aspect=1.4)
    g.figure.suptitle(f"SR by #objects — {title}", y=1.02)
    return g.figure


def same_team(episodes: pd.DataFrame, backend: str, profile: str, model: str) -> pd.Series:
    """Episodes of the notebook's own team: its heuristic profile, or its model for LLM backends."""
    return episodes.model == model if backend == "llm" else episodes.profile == profile


def team_column(backend: str) -> str:
    """Which record column names a team's members: ``profile`` (heuristic, oracle) or ``model``."""
    return "model" if backend == "llm" else "profile"


def table3(episodes: pd.DataFrame) -> pd.DataFrame | None:
    """Table 3: SR of one and two agents per prior and the relative gain of the second agent
    (None when the run has not both team sizes)."""
    sr = episodes.groupby(["prior", "n_agents"])["success"].mean().unstack()
    if 1 not in sr or 2 not in sr:
        return None
    return pd.DataFrame({"SR 1 agent": sr[1], "SR 2 agents": sr[2],
                         "relative gain": (sr[2] - sr[1]) / sr[1]}).round(3)


def with_pairs(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episodes with a ``pair`` column (task and team size): what paired tests match on."""
    return episodes.assign(pair=episodes.task_id + "/n" + episodes.n_agents.astype(str))


def message_examples(tagged: pd.DataFrame, codes: Sequence[str]) -> pd.DataFrame:
    """One example message per behaviour code (Table 17 style), or "(never observed)"."""
    return pd.DataFrame({"example": {c: tagged.loc[tagged[c], "message"].iloc[0] if tagged[c].any()
                                     else "(never observed)" for c in codes}})
