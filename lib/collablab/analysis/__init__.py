"""Statistics for the notebooks' analysis tail (MECoBench, DynaHMRC).

- :mod:`.lift`: failure-mode lift tables (MECoBench Table 22) and
  behaviour-effect tables (MECoBench Table 2).
- :mod:`.stratified`: severity-stratified treatment effects with shared
  stratum weights and Mantel-Haenszel summaries (MECoBench App. E.2, Tables 19-20).
- :mod:`.significance`: bootstrap CIs, paired tests, clustered GEE and Holm
  correction (DynaHMRC appendix, paired statistical comparison).
- :mod:`.behaviours`: keyword-rule tagging of agent messages (MECoBench §4.3,
  Tables 2 and 17; rules in ``behaviour_rules.yaml``).
- :mod:`.failures`: failure modes from records (duplicate grab, false completion,
  wrong grab; appendix E.2 / F, Tables 18-22, Fig. 37).
- :mod:`.plots`: house-style figures, each titled with its backend.
- :mod:`.tail`: :func:`analysis_tail`, the one call every notebook ends with.
- :mod:`.findings`: the shape of generated result sentences (:class:`~.findings.Report`,
  :class:`~.findings.Finding`, :func:`~.findings.quote`); each study writes its own.
"""

from .behaviours import (
    BEHAVIOUR_STYLE,
    BEHAVIOURS,
    SIGNALS,
    RuleSet,
    behaviour_effects,
    behaviour_table,
    episode_behaviours,
    load_rules,
    tag_messages,
    tag_text,
)
from .failures import (
    COORD_QUERY_STYLE,
    DUP_GRAB_STYLE,
    FAILURE_MODES,
    LIFT_STYLE,
    TABLE19_STYLE,
    TABLE20_STYLE,
    CorrectionAnalysis,
    completion_claims,
    coord_query_table,
    correction_analysis,
    dup_grab_rates,
    failure_indicators,
    failure_lift,
    grab_events,
)
from .lift import behaviour_effect_table, lift_table, newcombe_diff_ci, wilson_ci
from .plots import (
    behaviour_plot,
    coord_query_plot,
    dup_grab_plot,
    forest_plot,
    lift_plot,
    progress_curves,
    stratum_plot,
    team_size_plot,
    use_house_style,
)
from .significance import (
    CONTRAST_STYLE,
    TESTS,
    BootstrapCI,
    GEEResult,
    TestResult,
    bootstrap_ci,
    compare,
    contrast_table,
    gee_logistic,
    hodges_lehmann,
    holm_adjust,
    mcnemar_test,
    mean_difference,
    paired_bootstrap_ci,
    paired_table,
    require_columns,
    sign_flip_test,
    wilcoxon_test,
)
from .stratified import (
    StratifiedResult,
    mantel_haenszel,
    stratified_effect,
    stratified_effect_from_summary,
    top_code,
)
from .tail import TAIL_PARTS, analysis_tail

__all__ = [
    "BEHAVIOUR_STYLE",
    "BEHAVIOURS",
    "CONTRAST_STYLE",
    "COORD_QUERY_STYLE",
    "DUP_GRAB_STYLE",
    "LIFT_STYLE",
    "TABLE19_STYLE",
    "TABLE20_STYLE",
    "TAIL_PARTS",
    "contrast_table",
    "FAILURE_MODES",
    "SIGNALS",
    "CorrectionAnalysis",
    "RuleSet",
    "analysis_tail",
    "behaviour_effects",
    "behaviour_table",
    "completion_claims",
    "coord_query_table",
    "correction_analysis",
    "dup_grab_rates",
    "episode_behaviours",
    "failure_indicators",
    "failure_lift",
    "grab_events",
    "load_rules",
    "tag_messages",
    "tag_text",
    "behaviour_plot",
    "coord_query_plot",
    "dup_grab_plot",
    "forest_plot",
    "lift_plot",
    "progress_curves",
    "stratum_plot",
    "team_size_plot",
    "use_house_style",
    "TESTS",
    "BootstrapCI",
    "GEEResult",
    "StratifiedResult",
    "TestResult",
    "behaviour_effect_table",
    "bootstrap_ci",
    "compare",
    "gee_logistic",
    "hodges_lehmann",
    "holm_adjust",
    "lift_table",
    "mantel_haenszel",
    "mcnemar_test",
    "mean_difference",
    "newcombe_diff_ci",
    "wilson_ci",
    "paired_bootstrap_ci",
    "paired_table",
    "require_columns",
    "sign_flip_test",
    "stratified_effect",
    "stratified_effect_from_summary",
    "top_code",
    "wilcoxon_test",
]
