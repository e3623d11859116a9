"""Collaborative behaviours from agent messages (MECoBench §4.3, Table 2; examples Table 17).

The paper identifies behaviours "from the agents' communication and action trajectories
using keyword-based matching rules".  The rules here are data
(``behaviour_rules.yaml``, loaded by :func:`load_rules`): per behaviour a list of
case-insensitive regular expressions; a message shows the behaviour when any of them
matches.  Seven Table 2 behaviours (Info-Plan, Info-Loc, Info-Obj, Act-Del, Task-Assign,
Coord-Q, Correct with subtypes self / peer) plus three *signals* used by the failure
analysis (Neg-Report, Stuck, Completion-Claim; appendix E.2 and F).

Every table built here records the rules' version (column ``rules_version`` and
``.attrs["rules_version"]``) so a number can always be traced to the rules that made it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from .lift import behaviour_effect_table
from .present import TableStyle
from .significance import require_columns

__all__ = [
    "BEHAVIOURS",
    "BEHAVIOUR_STYLE",
    "SIGNALS",
    "Rule",
    "RuleSet",
    "backend_labels",
    "behaviour_effects",
    "behaviour_table",
    "check_unique_ids",
    "episode_behaviours",
    "load_rules",
    "tag_messages",
    "tag_text",
]

#: Table 2's behaviours, in the order of Table 17 (information sharing, task coordination,
#: alignment & correction).
BEHAVIOURS: tuple[str, ...] = ("Info-Plan", "Info-Loc", "Info-Obj", "Act-Del", "Task-Assign", "Coord-Q",
                               "Correct")
#: Message signals for the failure analysis (not part of Table 2).
SIGNALS: tuple[str, ...] = ("Neg-Report", "Stuck", "Completion-Claim")

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2014": ", ",
                         "\u2013": "-"})


@dataclass(frozen=True)
class Rule:
    """One behaviour (or subtype, or signal): its column name and compiled patterns."""

    name: str
    patterns: tuple[re.Pattern[str], ...]
    examples_match: tuple[str, ...] = ()
    examples_no_match: tuple[str, ...] = ()
    parent: str | None = None  # "Correct" for "Correct-self"
    kind: str = "behaviour"  # "behaviour" | "subtype" | "signal"
    description: str = ""

    def matches(self, text: str) -> bool:
        """True when any pattern matches ``text`` (quotes straightened, case-insensitive)."""
        t = _normalise(text)
        return any(p.search(t) for p in self.patterns)


@dataclass(frozen=True)
class RuleSet:
    """All rules of one ``behaviour_rules.yaml``, in column order."""

    version: str
    rules: tuple[Rule, ...]
    source: str = ""

    @property
    def names(self) -> list[str]:
        """Every output column: behaviours, subtypes, then signals."""
        cols: list[str] = []
        for r in self.rules:
            if r.parent is not None and r.parent not in cols:
                cols.append(r.parent)
            cols.append(r.name)
        return cols

    @property
    def behaviours(self) -> list[str]:
        """Table 2 behaviours (parents of subtypes included, subtypes and signals excluded)."""
        out: list[str] = []
        for r in self.rules:
            name = r.parent if r.parent is not None else r.name
            if r.kind != "signal" and name not in out:
                out.append(name)
        return out

    def rule(self, name: str) -> Rule:
        for r in self.rules:
            if r.name == name:
                return r
        raise KeyError(f"no rule {name!r}; rules: {[r.name for r in self.rules]}")

    def tag(self, text: str | None) -> dict[str, bool]:
        """Boolean per column for one message (all False for None / empty text)."""
        out = dict.fromkeys(self.names, False)
        if not isinstance(text, str) or not text.strip():
            return out
        t = _normalise(text)
        for r in self.rules:
            if any(p.search(t) for p in r.patterns):
                out[r.name] = True
                if r.parent is not None:
                    out[r.parent] = True
        return out


def _normalise(text: str) -> str:
    return text.translate(_QUOTES)


def _compile(name: str, spec: Mapping[str, Any], where: str) -> tuple[re.Pattern[str], ...]:
    pats = spec.get("patterns")
    if not isinstance(pats, list) or not pats:
        raise ValueError(f"{where}: rule {name!r} needs a non-empty list 'patterns'")
    out = []
    for i, p in enumerate(pats):
        try:
            out.append(re.compile(str(p), re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"{where}: rule {name!r} patterns[{i}] is not a valid regex: {exc}") from exc
    return tuple(out)


def _rule(name: str, spec: Mapping[str, Any], where: str, kind: str, parent: str | None = None) -> Rule:
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where}: rule {name!r} must be a mapping with 'patterns'")
    return Rule(name=name, patterns=_compile(name, spec, where),
                examples_match=tuple(spec.get("examples_match") or ()),
                examples_no_match=tuple(spec.get("examples_no_match") or ()),
                parent=parent, kind=kind, description=str(spec.get("description", "")))


def _parse_rules(data: Any, where: str) -> RuleSet:
    if not isinstance(data, Mapping) or "version" not in data or "behaviours" not in data:
        raise ValueError(f"{where}: expected a mapping with 'version' and 'behaviours'")
    rules: list[Rule] = []
    for name, spec in (data.get("behaviours") or {}).items():
        subtypes = spec.get("subtypes") if isinstance(spec, Mapping) else None
        if subtypes:
            for sub, sub_spec in subtypes.items():
                rules.append(_rule(f"{name}-{sub}", sub_spec, where, "subtype", parent=str(name)))
        else:
            rules.append(_rule(str(name), spec, where, "behaviour"))
    for name, spec in (data.get("signals") or {}).items():
        rules.append(_rule(str(name), spec, where, "signal"))
    return RuleSet(version=str(data["version"]), rules=tuple(rules), source=where)


@lru_cache(maxsize=8)
def _load_cached(path: str | None) -> RuleSet:
    if path is None:
        text = resources.files("collablab.analysis").joinpath("behaviour_rules.yaml").read_text("utf-8")
        return _parse_rules(yaml.safe_load(text), "collablab/analysis/behaviour_rules.yaml")
    return _parse_rules(yaml.safe_load(Path(path).read_text("utf-8")), path)


def load_rules(path: str | Path | None = None) -> RuleSet:
    """Load keyword rules (default: the packaged ``behaviour_rules.yaml``)."""
    return _load_cached(None if path is None else str(path))


def tag_text(text: str | None, rules: RuleSet | None = None) -> dict[str, bool]:
    """Behaviour / signal flags of a single message."""
    return (rules or load_rules()).tag(text)


def check_unique_ids(episodes: pd.DataFrame) -> None:
    """Steps are joined to episodes by ``episode_id``; it must identify one episode."""
    require_columns(episodes, ["episode_id"])
    dup = episodes["episode_id"].duplicated()
    if dup.any():
        some = pd.unique(episodes.loc[dup, "episode_id"]).tolist()[:5]
        raise ValueError(f"episodes: episode_id must be unique, repeated: {some}; records from collablab.runs "
                         "carry a unique 'episode_key' in episodes and steps: use it as episode_id")


def _messages(steps: pd.DataFrame) -> pd.DataFrame:
    cols = ["episode_id", "step", "agent", "message"]
    if steps is None or "message" not in steps.columns or len(steps) == 0:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    require_columns(steps, ["episode_id"])
    sub = steps.loc[:, [c for c in cols if c in steps.columns]].copy()
    for c in cols:
        if c not in sub.columns:
            sub[c] = np.nan
    text = sub["message"]
    keep = text.map(lambda m: isinstance(m, str) and bool(m.strip()))
    return sub.loc[keep.astype(bool), cols].reset_index(drop=True)


def tag_messages(steps: pd.DataFrame, rules: RuleSet | None = None) -> pd.DataFrame:
    """One row per non-empty message in ``steps`` with a boolean column per behaviour.

    Columns: episode_id, step, agent, message, the Table 2 behaviours (``Correct`` is
    the union of ``Correct-self`` and ``Correct-peer``), the subtypes, the signals
    (Neg-Report, Stuck, Completion-Claim) and ``rules_version``.
    """
    rs = rules or load_rules()
    msgs = _messages(steps)
    flags = pd.DataFrame([rs.tag(m) for m in msgs["message"]], columns=rs.names, index=msgs.index)
    out = pd.concat([msgs, flags.astype(bool)], axis=1)
    out["rules_version"] = rs.version
    out.attrs["rules_version"] = rs.version
    return out


def episode_behaviours(episodes: pd.DataFrame, steps: pd.DataFrame, rules: RuleSet | None = None,
                       tagged: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per episode: True when any message of the episode shows the behaviour.

    One row per row of ``episodes`` (episodes without messages get all False), columns
    episode_id, every rule column, ``n_messages`` and ``rules_version``.  ``tagged``
    reuses a :func:`tag_messages` result.
    """
    rs = rules or load_rules()
    check_unique_ids(episodes)
    tagged = tag_messages(steps, rs) if tagged is None else tagged
    names = rs.names
    if len(tagged):
        agg = tagged.groupby("episode_id", sort=False)[names].any()
        counts = tagged.groupby("episode_id", sort=False).size().rename("n_messages")
        agg = agg.join(counts)
    else:
        agg = pd.DataFrame(columns=[*names, "n_messages"])
    ids = episodes["episode_id"]
    out = agg.reindex(ids.to_numpy())
    out[names] = out[names].fillna(False).astype(bool)
    out["n_messages"] = out["n_messages"].fillna(0).astype(int)
    out = out.reset_index(drop=True)
    out.insert(0, "episode_id", ids.to_numpy())
    out["rules_version"] = rs.version
    out.attrs["rules_version"] = rs.version
    return out


def backend_labels(df: pd.DataFrame | None) -> list[str]:
    """Sorted distinct backend labels of a records table ([] if there is no ``backend`` column)."""
    if df is None or "backend" not in getattr(df, "columns", ()):
        return list(getattr(df, "attrs", {}).get("backends", []) if df is not None else [])
    return sorted(str(b) for b in pd.unique(df["backend"].dropna()))


#: How :func:`behaviour_effects` (Table 2 with CIs) is shown: Freq. in %, ΔSR and ΔCR in percentage
#: points with their Welch 95% CIs; the with/without means and the notes stay in the CSV.
BEHAVIOUR_STYLE = TableStyle(
    percents=("freq",),
    drop=("n_with", "success_with", "success_without", "cr_with", "cr_without", "note", "rules_version"),
    rename={"n": "episodes", "freq": "Freq.", "delta_success": "ΔSR (pp)", "delta_cr": "ΔCR (pp)"},
    order="|delta_success|", max_rows=15,
    caption="Freq.: share of episodes with the behaviour; ΔSR, ΔCR: episodes with it minus without, in "
            "percentage points, Welch 95% CI; –: undefined (behaviour never or always seen)")


def behaviour_effects(episodes: pd.DataFrame, steps: pd.DataFrame, by: str | None = "structure", *,
                      behaviours: Sequence[str] | None = None, rules: RuleSet | None = None,
                      ci: str = "welch", percent: bool = True,
                      tagged: pd.DataFrame | None = None) -> pd.DataFrame:
    """Long Table 2: one row per (``by`` group, behaviour) from :func:`behaviour_effect_table`.

    Freq. and ΔSR / ΔCR (with CIs) between episodes with and without the behaviour, in
    percent / percentage points by default (§4.3: "percentage-point differences between
    cases with and without the behavior").  Columns added: ``rules_version``.
    """
    rs = rules or load_rules()
    require_columns(episodes, ["episode_id", "success", "cr", by])
    names = list(behaviours) if behaviours is not None else rs.behaviours
    flags = episode_behaviours(episodes, steps, rs, tagged=tagged)
    unknown = [b for b in names if b not in flags.columns]
    if unknown:
        raise ValueError(f"behaviours {unknown} are not rule columns; available: {rs.names}")
    data = episodes[["episode_id", "success", "cr", *([by] if by else [])]].reset_index(drop=True)
    data = pd.concat([data, flags[names].reset_index(drop=True)], axis=1)
    data["success"] = data["success"].astype(float)
    table = behaviour_effect_table(data, names, ("success", "cr"), by=by, ci=ci, percent=percent)  # type: ignore[arg-type]
    if int(flags["n_messages"].sum()) == 0 and len(table):
        table["note"] = table["note"].map(lambda n: "; ".join(filter(None, ["no messages in any episode", n])))
    table["rules_version"] = rs.version
    table.attrs.update(rules_version=rs.version, backends=backend_labels(episodes),
                       n_messages=int(flags["n_messages"].sum()))
    return table


def behaviour_table(episodes: pd.DataFrame, steps: pd.DataFrame, by: str | None = "structure", *,
                    behaviours: Sequence[str] | None = None, rules: RuleSet | None = None,
                    tagged: pd.DataFrame | None = None, long: pd.DataFrame | None = None) -> pd.DataFrame:
    """MECoBench Table 2 layout: rows = behaviours; columns (group, Freq. / ΔSR / ΔCR).

    Freq. in %, ΔSR and ΔCR in percentage points (with - without).  ``by`` is the column
    whose values become the column groups (default ``structure``: Parallel / Sequential;
    ``None`` gives one group "all").  A ``note`` column explains undefined entries
    (behaviour never or always seen, no messages at all).  ``attrs`` carry
    ``rules_version`` and ``backends``; :func:`behaviour_effects` gives the long table
    with CIs (pass it as ``long`` to avoid recomputing).
    """
    rs = rules or load_rules()
    t = long if long is not None else behaviour_effects(episodes, steps, by, behaviours=behaviours, rules=rs,
                                                          tagged=tagged)
    names = list(behaviours) if behaviours is not None else rs.behaviours
    groups = list(pd.unique(t[by])) if by else ["all"]
    cols = pd.MultiIndex.from_product([[str(g) for g in groups], ["Freq. (%)", "ΔSR (pp)", "ΔCR (pp)"]])
    wide = pd.DataFrame(index=pd.Index(names, name="behaviour"), columns=cols, dtype=float)
    notes: dict[str, list[str]] = {b: [] for b in names}
    for _, r in t.iterrows():
        g = str(r[by]) if by else "all"
        b = r["behaviour"]
        wide.loc[b, (g, "Freq. (%)")] = r["freq"]
        wide.loc[b, (g, "ΔSR (pp)")] = r["delta_success"]
        wide.loc[b, (g, "ΔCR (pp)")] = r["delta_cr"]
        if r["note"]:
            notes[b].append(f"{g}: {r['note']}" if by else r["note"])
    wide[("note", "")] = [" | ".join(notes[b]) for b in names]
    wide.attrs.update(rules_version=rs.version, backends=t.attrs.get("backends", backend_labels(episodes)),
                      n_messages=t.attrs.get("n_messages"))
    if t.attrs.get("n_messages") == 0:
        wide.attrs["note"] = "no agent messages in these episodes: every behaviour is absent, Δ undefined"
    return wide
