"""Notebook 05's figures (mastracebench.txt Figs. 4, 5 and 10), in the house style of
:mod:`collablab.analysis.plots`; every title names the backend."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ...analysis.plots import rate_plot, share_plot
from .metrics import AR_STRONG_LABELS, AR_WEAK_LABELS, GAB_LABELS

__all__ = ["ar_plot", "gab_plot", "regress_lift_plot"]


def gab_plot(gab: pd.DataFrame) -> Figure:
    """Fig. 4: GAB label shares per method, one panel per task."""
    return share_plot(gab, GAB_LABELS, title="Final answer vs best initial proposal (GAB, Fig. 4)")


def ar_plot(ar: pd.DataFrame) -> Figure:
    """Figs. 5 and 10: AR label shares of strong and weak agents per method and task."""
    rows = ar.assign(method=ar["method"] + " · " + ar["group"])
    return share_plot(rows, [*AR_STRONG_LABELS, *AR_WEAK_LABELS],
                      title="Agent Refinement of strong and weak agents (AR, Figs. 5, 10)")


def regress_lift_plot(lift: pd.DataFrame) -> Figure:
    """Each method's GAB Regress rate (Wilson 95% CI) against the other methods' pooled rate."""
    return rate_plot(lift, value="regress", reference="others", title="GAB Regress rate per method (95% Wilson CI)")
