"""Statistics for the notebooks' analysis tail (MECoBench, DynaHMRC).

- :mod:`.lift`: failure-mode lift tables (MECoBench Table 22) and
  behaviour-effect tables (MECoBench Table 2).
- :mod:`.stratified`: severity-stratified treatment effects with shared
  stratum weights and Mantel-Haenszel summaries (MECoBench App. E.2, Tables 19-20).
- :mod:`.significance`: bootstrap CIs, paired tests, clustered GEE and Holm
  correction (DynaHMRC appendix, paired statistical comparison).
"""

from .lift import behaviour_effect_table, lift_table, newcombe_diff_ci, wilson_ci
from .significance import (
    TESTS,
    BootstrapCI,
    GEEResult,
    TestResult,
    bootstrap_ci,
    compare,
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

__all__ = [
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
    "paired_bootstrap_ci",
    "paired_table",
    "require_columns",
    "sign_flip_test",
    "stratified_effect",
    "stratified_effect_from_summary",
    "top_code",
    "wilcoxon_test",
]
