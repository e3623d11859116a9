"""The analysis tail (one call at the end of every notebook) and its figures."""

from __future__ import annotations

import json
import math
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from collablab.analysis import analysis_tail, compare, failure_indicators, lift_table, load_rules  # noqa: E402
from collablab.analysis import plots  # noqa: E402
from collablab.analysis.present import DisplayTable  # noqa: E402
from collablab.analysis.tail import EXPLANATIONS, TAIL_PARTS  # noqa: E402

CORR = "I accidentally grabbed a plate instead of the cupcake. I will put it back."
PLAN = "I will grab the cupcake (21) and bring it to the coffeetable."


def _turn(eid: str, step: int, agent: int, action: str = "wait", obj: int | None = None, cls: str | None = None,
          status: str = "ok", feedback: str = "", message: str | None = None) -> dict[str, Any]:
    return dict(episode_id=eid, step=step, agent=agent, action=action, obj_class=cls, target_class=None,
                args=json.dumps({"name": action, **({"obj": obj} if obj is not None else {})}), status=status,
                feedback=feedback, conflict=status == "conflict", spatial_error=False, handover=None, completed=0,
                message=message, tokens_prompt=0, tokens_completion=0, latency_s=0.0, note="")


def synthetic(n_tasks: int = 8, seeds: int = 2, protocols: tuple[str, ...] = ("broadcast", "leader"),
              messages: bool = True, wrong_grabs: bool = True, all_success: bool = False,
              seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random but reproducible records: leader succeeds more often; wrong grabs and corrections planted.

    Sizes avoid 12-13 pairs: scipy's Wilcoxon is an exact permutation test there (seconds per call).
    """
    rng = np.random.default_rng(seed)
    eps, steps = [], []
    for p_i, proto in enumerate(protocols):
        for t in range(n_tasks):
            for s in range(seeds):
                eid = f"{proto}-t{t}-s{s}"
                n_agents = 2 + (t % 2)
                n_steps = 6
                success = all_success or bool(rng.random() < 0.4 + 0.3 * p_i)
                final = 1.0 if success else float(rng.choice([0.25, 0.5, 0.75]))
                prog = list(np.minimum(np.linspace(0, final, n_steps + 1), final))
                turns = []
                n_wg = int(rng.integers(0, 4)) if wrong_grabs else 0
                for k in range(n_wg):
                    turns.append(_turn(eid, k, 0, "grab", 30 + k, "plate"))
                corrected = messages and n_wg > 0 and rng.random() < 0.5
                for step in range(n_steps):
                    for a in range(n_agents):
                        if any(x["step"] == step and x["agent"] == a for x in turns):
                            continue
                        msg = None
                        if messages and step == 0 and a == 0:
                            msg = PLAN
                        if corrected and step == n_steps - 1 and a == 1:
                            msg = CORR
                        if messages and step == 2 and a == 1 and rng.random() < 0.3:
                            msg = "Do you have the cupcake?"
                        turns.append(_turn(eid, step, a, "walk", 13, "coffeetable", message=msg))
                if rng.random() < 0.2:
                    turns.append(_turn(eid, 1, n_agents, "grab", 21, "cupcake", "conflict", "lost"))
                eps.append(dict(episode_id=eid, task_id=f"t{t}", task_name=f"task {t}",
                                structure="parallel" if t < n_tasks // 2 else "sequential", n_subgoals=4,
                                goal={"on_cupcake_13": 2, "on_apple_13": 2}, goal_classes=["apple", "cupcake"],
                                n_agents=n_agents, budget=24, steps_per_agent=24 // n_agents, team_steps=n_steps,
                                success=success, completed=int(4 * final), cr=final, progress=prog,
                                credits={}, actions=len(turns), conflict_actions=0, handover_attempts=0,
                                handover_failures=0, spatial_errors=0, tokens=0, backend="heuristic",
                                prior="full", seed=s, protocol=proto))
                steps += turns
    return pd.DataFrame(eps), pd.DataFrame(steps)


def _titles(fig: Figure) -> str:
    return fig.get_suptitle()


@pytest.fixture(autouse=True)
def _no_show(monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    def boom(*_: Any, **__: Any) -> None:
        raise AssertionError("plt.show() must never be called")

    monkeypatch.setattr(plt, "show", boom)


def test_tail_returns_all_tables_and_labelled_figures() -> None:
    eps, steps = synthetic()
    r = analysis_tail(eps, steps, contrast_col="protocol", show=False, n_resamples=500)
    for key in ("behaviour_table", "behaviour_effects", "indicators", "lift_table", "coord_query_table",
                "correction", "dup_grab_rates", "comparisons", "figures", "notes", "messages"):
        assert key in r
    assert r["backends"] == ["heuristic"] and r["rules_version"] == load_rules().version
    assert list(r["behaviour_table"].columns.get_level_values(0).unique()) == ["parallel", "sequential", "note"]
    c = r["comparisons"]
    assert set(c["contrast"]) == {"broadcast vs leader"} and set(c["outcome"]) == {"success", "cr"}
    assert (c.loc[c["outcome"] == "success", "n"].iloc[0]) == 16  # 8 tasks x 2 seeds paired
    # the tail's sign-flip row equals compare() called directly with (task, seed) pairs
    direct = compare(eps.assign(success=eps["success"].astype(float)), "protocol", "success",
                     ["task_id", "seed"], tests=("sign_flip",), n_resamples=500, n_permutations=500)
    row = c[(c["outcome"] == "success") & (c["test"] == "sign_flip")].iloc[0]
    assert row["estimate"] == pytest.approx(direct["estimate"].iloc[0])
    assert r["correction"].ok
    assert set(r["figures"]) >= {"forest", "behaviours", "lift", "coord_query", "progress", "dup_grab", "correction",
                                 "team_size"}
    for name, fig in r["figures"].items():
        assert isinstance(fig, Figure), name
        assert "backend: heuristic" in _titles(fig), name
    assert set(r["dup_grab_rates"]["protocol"]) == {"broadcast", "leader"}


def test_tail_show_displays_each_item_with_a_sentence(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import IPython.core.formatters
    import IPython.display

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **_: shown.extend(objs))
    eps, steps = synthetic()
    r = analysis_tail(eps, steps, contrast_col="protocol", show=True, n_resamples=200, run_dir=tmp_path)
    texts = [o.data for o in shown if isinstance(o, IPython.display.Markdown)]
    for key in ("behaviour_table", "comparisons", "lift_table", "coord_query_table", "correction",
                "dup_grab_rates", "progress", "team_size"):
        assert any(EXPLANATIONS[key] in t for t in texts), key
    # each part: a heading in words, then its sentence; the backend is in the figures, not the prose
    assert sum(t.startswith("### ") for t in texts) == len(TAIL_PARTS)
    assert not any("heuristic" in t for t in texts)
    figs = [o for o in shown if isinstance(o, Figure)]
    assert len(figs) == len(r["figures"]) and len({id(f) for f in figs}) == len(figs)
    # built without pyplot, they render themselves as PNG (no inline backend needed)
    formatter = IPython.core.formatters.PNGFormatter()
    pngs = [formatter(f) for f in figs]
    assert all(p[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert all(int.from_bytes(p[16:20], "big") <= 1100 for p in pngs)  # fits the notebook column
    # every table through present: at most 12 columns, each one's full CSV in the run folder
    tables = [o for o in shown if isinstance(o, DisplayTable)]
    assert len(tables) == len(r["displays"]) == 7
    for t in tables:
        assert t.frame.shape[1] <= 12 and t.csv_path is not None and t.csv_path.exists()
        assert t.csv_path.parent == tmp_path / "tables" and t.csv_path.name.startswith("tail_")
    # a figure is followed by its table, after the part's heading
    kinds = ["md" if isinstance(o, IPython.display.Markdown) else "fig" if isinstance(o, Figure) else "table"
             for o in shown]
    assert kinds[:3] == ["md", "fig", "table"]


def test_tail_parts_choose_what_is_displayed(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **_: shown.extend(objs))
    eps, steps = synthetic()
    r = analysis_tail(eps, steps, contrast_col="protocol", show=True, n_resamples=200,
                      parts=("contrasts", "progress"))
    texts = [o.data for o in shown if isinstance(o, IPython.display.Markdown)]
    assert [t.split("\n")[0] for t in texts] == ["### Paired contrasts of protocol",
                                                 "### Progress over the step budget (paper Fig. 33)"]
    assert sum(isinstance(o, Figure) for o in shown) == 2 and "lift" in r["figures"]  # computed, not shown
    assert all(d.csv_path is None for d in r["displays"].values())  # no run_dir: no CSV
    with pytest.raises(ValueError, match="parts"):
        analysis_tail(eps, steps, contrast_col="protocol", show=False, parts=("lift",))


def test_contrast_table_keeps_odds_ratios_apart_from_differences() -> None:
    eps, steps = synthetic()
    r = analysis_tail(eps, steps, contrast_col="protocol", show=False, n_resamples=200)
    c, wide = r["comparisons"], r["contrast_table"]
    assert len(wide) == 2 and list(wide["outcome"]) == ["success rate", "completion rate"]
    sf = c[(c["test"] == "sign_flip") & (c["outcome"] == "success")].iloc[0]
    gee = c[(c["test"] == "gee") & (c["outcome"] == "success")].iloc[0]
    row = wide.iloc[0]
    assert row["difference"] == pytest.approx(100 * sf["estimate"])  # percentage points
    assert row["difference_low"] == pytest.approx(100 * sf["ci_low"])
    assert row["odds_ratio"] == pytest.approx(gee["estimate"]) and row["p_gee"] == gee["p_adjusted"]
    assert row["p_sign_flip_raw"] == sf["p_value"] and row["n"] == sf["n"]
    shown = r["displays"]["contrasts"].frame
    assert "p Wilcoxon" in shown.columns and "p_sign_flip_raw" not in shown.columns
    cell = shown["odds ratio a vs b (GEE)"].iloc[0]
    assert cell.count("[") == 1 and cell.endswith("]")


def test_tail_degenerate_inputs_do_not_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda *objs, **_: None)
    eps, steps = synthetic(messages=False, wrong_grabs=False)
    r = analysis_tail(eps, steps, contrast_col="protocol", show=True, n_resamples=200)
    assert not r["episode_behaviours"][list(load_rules().behaviours)].any().any()
    assert "no agent messages" in r["behaviour_table"].attrs["note"]
    assert not r["correction"].ok and any("not enough wrong-grab episodes" in n for n in r["notes"])
    assert "correction" not in r["figures"]
    # single episode: one condition, no contrast
    one = analysis_tail(eps.iloc[:1], steps[steps["episode_id"] == eps["episode_id"].iloc[0]],
                        contrast_col="protocol", show=True)
    assert len(one["comparisons"]) == 0 and any("no contrast" in n for n in one["notes"])
    # all successes: lift undefined, McNemar/GEE undefined -- but reported, not raised
    eps2, steps2 = synthetic(all_success=True, seed=3)
    r2 = analysis_tail(eps2, steps2, contrast_col="protocol", show=True, n_resamples=200)
    assert r2["lift_table"]["lift"].isna().all()
    assert r2["comparisons"].query("test == 'mcnemar' and outcome == 'success'")["p_value"].isna().all()
    # no steps at all
    r3 = analysis_tail(eps, None, contrast_col="protocol", show=False, n_resamples=200)
    assert not r3["indicators"]["dup_grab"].any()


def test_tail_bad_input_names_the_column() -> None:
    eps, steps = synthetic(n_tasks=2, seeds=1)
    with pytest.raises(ValueError, match="'condition'"):
        analysis_tail(eps, steps, contrast_col="condition", show=False)


def test_tail_pairs_by_task_only_when_seeds_differ() -> None:
    eps, steps = synthetic(n_tasks=4, seeds=1)
    eps.loc[eps["protocol"] == "leader", "seed"] = 7
    r = analysis_tail(eps, steps, contrast_col="protocol", show=False, n_resamples=200)
    assert any("paired by task_id only" in n for n in r["notes"])
    assert r["comparisons"].query("test == 'sign_flip'")["n"].iloc[0] == 4


# ----------------------------------------------------------------------------- plots
def test_lift_plot_draws_infinite_lift_at_axis_edge() -> None:
    df = pd.DataFrame({"success": [1, 1, 0, 0, 0], "halluc": [0, 0, 1, 0, 0], "dup": [1, 0, 1, 1, 0],
                       "never": [0] * 5})
    t = lift_table(df, ["halluc", "dup", "never"])
    assert math.isinf(t.loc[0, "lift"])
    fig = plots.lift_plot(t, backend="openai:gpt-4o")
    ax = fig.axes[0]
    right = ax.get_xlim()[1]
    widths = sorted(p.get_width() for p in ax.patches)
    assert widths[-1] == pytest.approx(right)  # the ∞ bar reaches the edge
    assert widths[0] == pytest.approx(t.loc[1, "lift"])
    texts = [x.get_text() for x in ax.texts]
    assert any("∞" in s for s in texts) and any("undefined" in s for s in texts)
    assert "backend: openai:gpt-4o" in _titles(fig)
    assert "not an LLM" not in _titles(fig)


def test_forest_plot_needs_a_backend_and_draws_cis() -> None:
    eps, _ = synthetic(n_tasks=4)
    table = compare(eps.assign(success=eps["success"].astype(float)), "protocol", ["success", "cr"],
                    ["task_id", "seed"], n_resamples=200, n_permutations=200)
    with pytest.raises(ValueError, match="backend"):
        plots.forest_plot(table)
    fig = plots.forest_plot(table, backend=eps)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["broadcast vs leader"]
    assert [a.get_title() for a in fig.axes] == ["success rate", "completion rate"]  # a panel per outcome
    assert "sign-flip" in _titles(fig) and "backend: heuristic" in _titles(fig)
    assert all(t.get_text().startswith("p") for t in ax.texts)
    gee = plots.forest_plot(table, backend="heuristic", test="gee")
    assert gee.axes[0].get_xscale() == "log"


def test_progress_long_is_a_step_function_over_equivalent_steps() -> None:
    eps = pd.DataFrame({"episode_id": ["a"], "progress": [[0.0, 0.5, 1.0]], "n_agents": [2], "budget": [6],
                        "protocol": ["x"], "backend": ["heuristic"]})
    long = plots.progress_long(eps, "protocol")
    assert long["equivalent_step"].tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert long["cr"].tolist() == [0.0, 0.0, 0.5, 0.5, 1.0, 1.0, 1.0]
    fig = plots.progress_curves(eps, "protocol")
    assert "backend: heuristic" in _titles(fig)


def test_team_size_plot_and_house_style() -> None:
    import matplotlib as mpl

    plots.use_house_style()
    assert mpl.rcParams["axes.spines.top"] is False
    eps, _ = synthetic(n_tasks=4)
    fig = plots.team_size_plot(eps, "success", hue="protocol", n_boot=100)
    ax = fig.axes[0]
    assert list(ax.get_xticks()) == [2, 3]
    assert len(ax.lines) >= 2 and len(ax.collections) >= 2  # a line and a CI band per protocol
    with pytest.raises(ValueError, match="backend"):
        plots.team_size_plot(eps.drop(columns="backend"), "success")
    # numeric levels are categories with distinct colours; hue == x draws one line
    four = pd.concat([eps, eps.assign(n_agents=4, protocol="x")])
    by_size = plots.team_size_plot(four, "success", hue="n_agents", n_boot=50)
    assert by_size.axes[0].get_legend() is None and list(by_size.axes[0].get_xticks()) == [2, 3, 4]
    levels = plots.team_size_plot(four.assign(k=four["n_agents"]), "success", hue="k", n_boot=50)
    colours = {str(line.get_color()) for line in levels.axes[0].lines}
    assert len(colours) == 3 and [t.get_text() for t in levels.axes[0].get_legend().get_texts()] == ["2", "3", "4"]


def test_small_multiples_and_legible_text() -> None:
    eps, steps = synthetic(protocols=("isolated", "broadcast", "leader", "discuss"))
    fig = plots.progress_curves(eps, "protocol")
    visible = [a for a in fig.axes if a.get_visible()]
    assert [a.get_title() for a in visible] == ["isolated", "broadcast", "leader", "discuss"]
    assert all(a.get_ylim() == visible[0].get_ylim() for a in visible)  # shared axes
    assert fig.get_figwidth() <= 11
    r = analysis_tail(eps, steps, contrast_col="protocol", show=False, n_resamples=100)
    for name, f in r["figures"].items():
        assert f.get_figwidth() <= 11, name
        sizes = [t.get_fontsize() for a in f.axes for t in [*a.texts, *a.get_xticklabels(), *a.get_yticklabels()]]
        assert min(sizes, default=9) >= 9, name


def test_stratum_plot_marks_undefined_strata() -> None:
    eps, steps = synthetic()
    r = analysis_tail(eps, steps, contrast_col="protocol", show=False, n_resamples=200)
    t20 = r["correction"].table20
    fig = plots.stratum_plot(t20, backend=eps)
    per_group = t20.reset_index().drop_duplicates(["group", "#WG"])
    n_finite = int(per_group[["ΔSR (pp)", "ΔCR (pp)"]].notna().to_numpy().sum())
    assert sum(len(ax.patches) for ax in fig.axes) == n_finite  # undefined strata are not drawn as 0
    n_na = int(per_group["ΔSR (pp)"].isna().sum())
    assert n_na > 0 and sum(t.get_text() == "n/a" for ax in fig.axes for t in ax.texts) == n_na
    empty = plots.stratum_plot(t20.iloc[0:0], backend="heuristic")
    assert any("not enough wrong-grab episodes" in t.get_text() for t in empty.axes[0].texts)
    shown = r["displays"]["table20"]
    assert "Adjusted effect" in shown.frame.to_string() and shown.frame.shape[1] <= 12


def test_tail_uses_episode_key_when_episode_ids_repeat() -> None:
    eps, steps = synthetic(n_tasks=4, seeds=1)
    eps["episode_key"], steps["episode_key"] = eps["episode_id"], steps["episode_id"]
    short = {e: e.split("-", 1)[1] for e in eps["episode_id"]}  # drop the protocol: ids repeat
    eps["episode_id"], steps["episode_id"] = eps["episode_id"].map(short), steps["episode_id"].map(short)
    r = analysis_tail(eps, steps, contrast_col="protocol", show=False, n_resamples=200)
    assert any("episode_key" in n for n in r["notes"])
    ref = failure_indicators(*synthetic(n_tasks=4, seeds=1))
    assert r["indicators"]["n_wrong_grabs"].tolist() == ref["n_wrong_grabs"].tolist()
    assert r["indicators"]["n_wrong_grabs"].sum() > 0
    with pytest.raises(ValueError, match="episode_key"):
        analysis_tail(eps.drop(columns="episode_key"), steps, contrast_col="protocol", show=False)
