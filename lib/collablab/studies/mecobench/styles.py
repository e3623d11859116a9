"""How MECoBench's result tables are shown (issue 24): plain column names, rates (SR, CR, HFR, CAR,
spatial errors, shares of episodes) as percentages, SR with its 95% Wilson interval and CR and AUC
with their 95% t intervals in one cell, the metrics a section is about (the rest stays in the CSV
each displayed table writes to the run folder). One :class:`TableStyle` per
table name of the notebooks' reports (:func:`.experiments.read_notebook` sets ``Report.styles``).
"""

from __future__ import annotations

from ...analysis import COORD_QUERY_STYLE, LIFT_STYLE, TABLE19_STYLE
from ...analysis.present import TableStyle

__all__ = ["STYLES", "styles"]

_NAMES = {"n_agents": "agents", "cases": "episodes", "SR": "SR", "CR": "CR", "AUC": "AUC", "DOL": "DOL",
          "CAR": "CAR", "HFR": "HFR", "SpatialErr": "spatial errors", "TokensPerStep": "tokens per step",
          "prior": "prior", "protocol": "protocol", "structure": "structure", "budget": "budget (steps)",
          "min_objects": "fewest objects", "max_objects": "most objects", "slope": "SR slope per object",
          "intercept": "intercept", "objects": "objects"}
_EXTRA = ("Handovers", "HandoversRequired", "SpatialErr", "TokensPerStep", "DOL")
_RATES = ("SR", "CR", "HFR", "CAR", "SpatialErr")
_SR = ("SR with its 95% Wilson interval, CR and AUC (0-1: the area under the completion curve) with 95% t "
       "intervals; HFR empty when no handover was attempted")


def _metrics(*drop: str, caption: str = _SR, **kw: object) -> TableStyle:
    return TableStyle(rename=_NAMES, drop=drop, caption=caption, rates=_RATES, **kw)  # type: ignore[arg-type]


def _by_condition(caption: str, columns: tuple[str, ...]) -> TableStyle:
    """A :func:`.tables.wide` table: conditions as columns (``columns``: their SR names), one SR cell each."""
    return TableStyle(rename={"n_agents": "agents", "prior": "prior"}, rates=columns, caption=caption)


#: Styles by report table name (each notebook uses the names its report holds).
STYLES: dict[str, TableStyle] = {
    "table8": _metrics(),
    "table9": _by_condition("SR on parallel tasks by team size and protocol, with 95% Wilson intervals",
                            tuple(f"{p} SR" for p in ("broadcast", "isolated", "leader", "discuss", "leader_vision",
                                                      "shared_memory"))),
    "scaling": _metrics(*_EXTRA, "HFR"),
    "table11": _metrics(),
    "trends": TableStyle(rename={**_NAMES, "slope": "SR slope (pp per object)"}, drop=("intercept",),
                         caption="Least-squares line of SR (%) on the number of objects per team size (Fig. 7b); "
                                 "a flatter (less negative) slope holds up better on longer tasks"),
    "slopes": TableStyle(caption="Slope of SR on the number of objects (percentage points per extra object, "
                                 "least squares, Figs. 34b, 36) by prior and team size; flatter holds up better"),
    "modes": _metrics("Handovers", "HandoversRequired", "DOL"),
    "memory": _metrics("Handovers", "HandoversRequired", "SpatialErr", "DOL", "CAR", "HFR"),
    "mixed": _metrics(*_EXTRA, "HFR", labels=("profile", "model")),
    "failures": TableStyle(rename={"with": "episodes with it", "rate": "share of episodes",
                                                    "SR with": "SR with it", "SR without": "SR without it"},
                           rates=("rate", "SR with", "SR without"), caption="all: every episode of the run"),
    "corrections": TableStyle(rates=("rate",), rename={"wrong_grab": "with a wrong grab",
                                                       "self_corrected": "with a self-correction",
                                                       "rate": "share self-corrected"}),
    "priors_sr": _by_condition("SR on parallel tasks by prior and team size, with 95% Wilson intervals; each "
                               "prior with its budget (see the budget line below)",
                               tuple(f"SR, {n} agent{'s' if n > 1 else ''}" for n in range(1, 11))),
    "priors": _metrics(*_EXTRA, "HFR", "CAR", order="prior"),
    "table3": TableStyle(rates=("SR 1 agent", "SR 2 agents", "relative gain"), rename={"cases 1 agent": "episodes (1 agent)",
                                                           "cases 2 agents": "episodes (2 agents)"},
                         caption="Relative gain = (SR with 2 agents − SR with 1) / SR with 1 (Table 3); "
                                 "undefined (–) when SR with 1 agent is 0"),
    "profiles": _metrics("Handovers", "HandoversRequired", "TokensPerStep", "DOL"),
    "table18": COORD_QUERY_STYLE,
    "table19": TABLE19_STYLE,
    "lift": LIFT_STYLE,
    "messages": TableStyle(labels=("behaviour", "example"),
                           caption="one example message per behaviour (cut at 90 characters)"),
    "contrasts": TableStyle(rename={"difference": "difference (pp)", "fewest cases": "episodes (fewer cell)"},
                            drop=("shown", "effect"), labels=("contrast", "metric", "ref"),
                            caption="Differences in percentage points with Newcombe's 95% interval"),
}


def styles(*names: str) -> dict[str, TableStyle]:
    """The styles of the tables ``names`` (a report's ``styles``)."""
    return {n: STYLES[n] for n in names if n in STYLES}
