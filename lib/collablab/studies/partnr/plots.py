"""Notebook 07's figures (observe_share_predict.txt §4.2, §4.5 and the analysis tail), in the
house style of :mod:`collablab.analysis.plots`; every title names the backend."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ...analysis.plots import forest_plot

__all__ = ["channel_test_plot"]

_NAMES = {"simulation_steps": "simulation steps", "extraneous_effort": "Extraneous Effort",
          "success": "success", "percent_complete": "Percent Complete"}


def channel_test_plot(tests: pd.DataFrame, outcome: str = "simulation_steps") -> Figure:
    """The analysis tail's paired contrasts of one outcome (channel on − off, mean paired
    difference with its 95% paired-bootstrap CI, Holm-adjusted p), one row per pair."""
    rows = tests[(tests["outcome"] == outcome) & (tests["test"] == "sign_flip")].reset_index(drop=True)
    rows = rows.assign(contrast=rows["channel"] + ": " + rows["on"] + " vs " + rows["off"])
    return forest_plot(rows, backend=tests, test="sign_flip",
                       title=f"Channel on − off, {_NAMES.get(outcome, outcome)} (paired by task, 95% CI)")
