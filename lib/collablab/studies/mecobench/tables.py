"""MECoBench's result tables in the paper's layouts (§3.2 metrics per group, Tables 8-16,
Fig. 7b) from episode records; pure functions of the records."""

from __future__ import annotations

from typing import Sequence

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
