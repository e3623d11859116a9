"""Shards of a run for cluster job arrays: which specs shard ``k/n`` runs, and merging the
finished shard folders back into one run folder with the records of the unsharded run.

Shard ``k`` of ``n`` runs the specs at grid positions ``k-1, k-1+n, k-1+2n, ...`` (interleaved,
so every shard gets a similar mix) into ``<run_id>.shard-k-of-n``; its manifest's
``params["shard"]`` names the full grid. :func:`merge_shards` checks that the shards are the
``n`` slices of one grid with every episode done exactly once, then writes ``episodes.jsonl``
and ``steps.jsonl`` in grid order (``grid_index`` of the full grid) and a manifest naming the
shards. Anything else is refused with a ValueError that says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .grid import default_run_id, episode_key
from .manifest import now_iso, read_manifest, write_manifest
from .store import EPISODES, FAILURES, INDEX, KEY, STEPS, TIMINGS, RunLock, iter_lines, write_atomic

__all__ = ["SHARD_PARAM", "merge_shards", "parse_shard", "shard_info", "shard_run_id", "shard_slice"]

#: The key of a shard's manifest ``params`` that describes the full grid.
SHARD_PARAM = "shard"
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """``"k/n"`` -> ``(k, n)`` with ``1 <= k <= n``; ValueError naming ``shard`` otherwise."""
    m = _SHARD.match(text) if isinstance(text, str) else None
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ValueError(f"shard: expected k/n with 1 <= k <= n (e.g. 2/8), got {text!r}")
    return int(m.group(1)), int(m.group(2))


def shard_slice(items: Sequence[Any], k: int, n: int) -> list[Any]:
    """The ``k``-th of ``n`` interleaved slices of ``items`` (deterministic by order)."""
    return list(items[k - 1::n])


def shard_run_id(run_id: str, k: int, n: int) -> str:
    """The run id of shard ``k`` of ``n`` of run ``run_id``."""
    return f"{run_id}.shard-{k}-of-{n}"


def shard_info(full_specs: Sequence[dict[str, Any]], fn: str, run_id: str, k: int, n: int) -> dict[str, Any]:
    """What a shard records about its full grid (``params["shard"]`` of its manifest)."""
    return {"k": k, "n": n, "run_id": run_id, "n_total": len(full_specs),
            "grid_id": default_run_id(full_specs, fn)}


def _shard_manifest(d: Path) -> dict[str, Any]:
    m = read_manifest(d)
    if m is None:
        raise ValueError(f"shards: {d} has no manifest.json; is it a run folder?")
    info = (m.get("params") or {}).get(SHARD_PARAM)
    if not isinstance(info, dict) or not {"k", "n", "grid_id", "n_total"} <= set(info):
        raise ValueError(f"shards: {d} is not a shard (its manifest has no params.{SHARD_PARAM}); "
                         "run shards with `collablab episodes --shard k/n`")
    return m


def _retag(line: bytes, key: str, old: int, new: int, where: Path) -> bytes:
    """``line`` with its ``grid_index`` changed from ``old`` to ``new``, byte for byte otherwise."""
    head = ("{" + json.dumps(KEY) + ": " + json.dumps(key, ensure_ascii=False) + ", "
            + json.dumps(INDEX) + ": " + str(old)).encode("utf-8")
    if not line.startswith(head) or line[len(head):len(head) + 1] not in (b",", b"}"):
        raise ValueError(f"shards: {where}: a line of {key} does not start with its "
                         f"episode_key and grid_index {old}; the file was edited")
    return head[: len(head) - len(str(old))] + str(new).encode() + line[len(head):]


def _read_shard(d: Path, m: dict[str, Any], k: int, n: int) -> tuple[dict[str, bytes], dict[str, list[bytes]]]:
    """``(episode line by key, step lines by key)`` of shard ``d``, grid_index set to the full grid's."""
    full_index = {s["episode_key"]: (k - 1) + s["grid_index"] * n for s in m.get("specs", [])}
    local_index = {s["episode_key"]: s["grid_index"] for s in m.get("specs", [])}
    episodes: dict[str, bytes] = {}
    for _, line in iter_lines(d / EPISODES):
        key = json.loads(line)[KEY]
        if key not in full_index:
            raise ValueError(f"shards: {d / EPISODES} holds {key}, which is not in its grid")
        if key in episodes:
            raise ValueError(f"shards: {d / EPISODES} holds {key} twice")
        episodes[key] = _retag(line, key, local_index[key], full_index[key], d / EPISODES)
    missing = [k_ for k_ in full_index if k_ not in episodes]
    if missing:
        raise ValueError(f"shards: {d} has {len(missing)} of {len(full_index)} episodes not done "
                         f"(e.g. {missing[0]}); run that shard again until it completes, then merge")
    steps: dict[str, list[bytes]] = {}
    for _, line in iter_lines(d / STEPS):
        key = json.loads(line)[KEY]
        if key in episodes:  # steps of an uncommitted episode (after a crash) are not records
            steps.setdefault(key, []).append(_retag(line, key, local_index[key], full_index[key], d / STEPS))
    return episodes, steps


def merge_shards(shard_dirs: Sequence[str | Path], out_dir: str | Path) -> Path:
    """Merge the finished shard folders of one grid into ``out_dir``; returns ``out_dir``.

    Checks: every folder is a shard of the same ``fn`` and full grid, the shards are ``1..n`` of
    ``n`` exactly once, their specs rebuild the full grid, and every episode is done exactly once.
    ``out_dir`` must not hold records yet. Writes ``episodes.jsonl``/``steps.jsonl`` in grid order
    (the bytes an unsharded in-process run writes), ``timings.jsonl`` and a manifest.
    """
    dirs = [Path(d) for d in shard_dirs]
    if not dirs:
        raise ValueError("shards: give the shard folders to merge")
    manifests = [_shard_manifest(d) for d in dirs]
    first, info0 = manifests[0], manifests[0]["params"][SHARD_PARAM]
    n = info0["n"]
    by_k: dict[int, tuple[Path, dict[str, Any]]] = {}
    for d, m in zip(dirs, manifests):
        info = m["params"][SHARD_PARAM]
        if m.get("fn") != first.get("fn"):
            raise ValueError(f"shards: {d} ran fn {m.get('fn')!r}, {dirs[0]} ran {first.get('fn')!r}")
        if (info["grid_id"], info["n"], info["n_total"]) != (info0["grid_id"], n, info0["n_total"]):
            raise ValueError(f"shards: {d} is shard {info['k']}/{info['n']} of grid {info['grid_id']} "
                             f"({info['n_total']} specs), {dirs[0]} is of grid {info0['grid_id']} "
                             f"({info0['n_total']} specs) in {n} shards; merge shards of one grid")
        if info["k"] in by_k:
            raise ValueError(f"shards: shard {info['k']}/{n} given twice ({by_k[info['k']][0]} and {d})")
        by_k[info["k"]] = (d, m)
    missing = sorted(set(range(1, n + 1)) - set(by_k))
    if missing:
        raise ValueError(f"shards: shard(s) {', '.join(f'{k}/{n}' for k in missing)} missing; "
                         f"a merge needs all {n}")
    full: list[dict[str, Any] | None] = [None] * info0["n_total"]
    for k, (d, m) in by_k.items():
        for s in m.get("specs", []):
            i = (k - 1) + s["grid_index"] * n
            if i >= len(full) or full[i] is not None:
                raise ValueError(f"shards: {d} has a spec at grid position {i}, outside its slice")
            full[i] = s["spec"]
    if any(s is None for s in full) or default_run_id(full, first["fn"]) != info0["grid_id"]:
        raise ValueError(f"shards: the shards' specs do not rebuild grid {info0['grid_id']}; "
                         "were they run from the same grid file?")
    episodes: dict[str, bytes] = {}
    steps: dict[str, list[bytes]] = {}
    for k, (d, m) in sorted(by_k.items()):
        e, s = _read_shard(d, m, k, n)
        episodes.update(e)
        steps.update(s)
    keys = [episode_key(s) for s in full]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with RunLock(out):
        if any((out / f).exists() and (out / f).stat().st_size for f in (EPISODES, STEPS)):
            raise ValueError(f"out: {out} already holds records; merge into a new folder")
        write_atomic(out / STEPS, b"".join(b"".join(steps.get(k, [])) for k in keys).decode("utf-8"))
        write_atomic(out / EPISODES, b"".join(episodes[k] for k in keys).decode("utf-8"))
        write_atomic(out / FAILURES, "")
        timings = []
        for k, (d, m) in sorted(by_k.items()):
            for _, line in iter_lines(d / TIMINGS):
                rec = json.loads(line)
                if rec.get(KEY) in episodes:
                    rec[INDEX] = (k - 1) + rec[INDEX] * n
                    timings.append(json.dumps(rec) + "\n")
        write_atomic(out / TIMINGS, "".join(timings))
        params = {p: v for p, v in (first.get("params") or {}).items() if p != SHARD_PARAM}
        now = now_iso()
        manifest = {
            **{f: first.get(f) for f in ("schema", "study", "fn", "fn_source", "studies_registered",
                                          "backend", "fn_defaults", "code", "environment", "spec_fields",
                                          "files")},
            "run_id": out.name, "status": "complete", "created": now, "updated": now,
            "counts": {"total": len(keys), "done": len(keys), "failed": 0, "pending": 0},
            "backends_seen": sorted({b for _, m in by_k.values() for b in m.get("backends_seen", [])}),
            "params": params,
            "specs": [{"grid_index": i, "episode_key": k, "spec": s} for i, (k, s) in enumerate(zip(keys, full))],
            "merged_from": [{"k": k, "run_dir": str(d.resolve()), "run_id": m.get("run_id"),
                             "code": m.get("code"), "sessions": len(m.get("sessions", []))}
                            for k, (d, m) in sorted(by_k.items())],
            "sessions": [{"merged": now, "status": "complete", "shards": n, "of_run_id": info0.get("run_id")}],
        }
        write_manifest(out, manifest)
    return out
