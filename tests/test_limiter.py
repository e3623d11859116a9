"""collablab.llm.limiter across processes: one bound per endpoint alias shared by real worker
processes (slot files + flock), freed by the OS when a holder dies; the lease logic of the Ray
actor (run here without Ray); COLLABLAB_LIMITER parsing."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from collablab.llm.limiter import (EndpointLimiter, FileLimiter, LimiterActor, SharedLimiter, endpoint_limiter,
                                   limiter_config)

ROOT = Path(__file__).resolve().parents[1]

HOLDER = textwrap.dedent("""
    import asyncio, fcntl, sys, threading
    from collablab.llm.limiter import endpoint_limiter
    counter, alias, bound, n_threads, n_tasks, n_iter, hold = sys.argv[1:8]
    bound, n_threads, n_tasks, n_iter, hold = int(bound), int(n_threads), int(n_tasks), int(n_iter), float(hold)

    def bump(d):  # the number of slots held right now, over every process, and its peak
        with open(counter, "r+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            cur, peak = map(int, f.read().split())
            cur += d
            f.seek(0); f.truncate(); f.write(f"{cur} {max(peak, cur)}")

    async def task():
        lim = endpoint_limiter(alias, bound)
        for _ in range(n_iter):
            await lim.acquire()
            try:
                bump(1)
                await asyncio.sleep(hold)
                bump(-1)
            finally:
                lim.release()

    async def many():
        await asyncio.gather(*(task() for _ in range(n_tasks)))

    threads = [threading.Thread(target=asyncio.run, args=(many(),)) for _ in range(n_threads)]
    for t in threads: t.start()
    for t in threads: t.join()
    lim = endpoint_limiter(alias)
    print(type(lim).__name__, lim.max_in_flight, lim.in_flight)
""")


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "lib"), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def test_file_limiter_bounds_calls_across_processes_and_reaches_the_bound(tmp_path: Path) -> None:
    bound, n_procs = 5, 4  # 4 processes x 2 threads x 2 tasks = 16 callers for 5 slots
    counter = tmp_path / "counter"
    counter.write_text("0 0")
    env = _env(COLLABLAB_LIMITER=f"file:{tmp_path / 'slots'}")
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, str(counter), "ep-x", str(bound), "2", "2", "6", "0.02"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(n_procs)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    cur, peak = map(int, counter.read_text().split())
    assert cur == 0
    assert peak == bound, f"peak in flight over all processes {peak}, bound {bound}"
    for out, _ in outs:
        kind, local_peak, in_flight = out.split()
        assert kind == "SharedLimiter" and int(in_flight) == 0
        assert 1 <= int(local_peak) <= bound  # the per-process statistic is kept
    assert sorted(p.name for p in (tmp_path / "slots").iterdir())[0].startswith("ep-x-")


def test_without_the_shared_limiter_processes_exceed_the_bound(tmp_path: Path) -> None:
    """The test above can fail: the same callers without COLLABLAB_LIMITER hold more slots."""
    counter = tmp_path / "counter"
    counter.write_text("0 0")
    env = _env()
    env.pop("COLLABLAB_LIMITER", None)
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, str(counter), "ep-y", "2", "1", "2", "3", "0.1"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert int(counter.read_text().split()[1]) > 2


def test_a_killed_holder_frees_its_slots(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import asyncio, sys, time
        from collablab.llm.limiter import FileLimiter
        lim = FileLimiter("held", 2, sys.argv[1])
        asyncio.run(lim.acquire()); asyncio.run(lim.acquire())
        print("held", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], env=_env(),
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        mine = FileLimiter("held", 2, tmp_path)
        assert not mine.try_acquire()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10
    while not mine.try_acquire():
        assert time.monotonic() < deadline, "the dead holder's slot was not freed"
        time.sleep(0.01)
    assert mine.try_acquire() and not mine.try_acquire() and mine.held == 2
    mine.release()
    mine.release()
    with pytest.raises(RuntimeError, match="released too many times"):
        mine.release()
    mine.close()


def test_file_limiter_slots_within_one_process_are_distinct(tmp_path: Path) -> None:
    a, b = FileLimiter("same", 2, tmp_path), FileLimiter("same", 2, tmp_path)
    assert a.try_acquire() and a.try_acquire() and not a.try_acquire()
    assert not b.try_acquire()  # flock: two open files of one process still exclude each other
    a.release()
    assert b.try_acquire() and not a.try_acquire()
    b.release()
    a.release()
    assert FileLimiter("other", 1, tmp_path).try_acquire()  # another alias, other slot files


def test_endpoint_limiter_wraps_the_local_limiter_when_shared(tmp_path: Path, monkeypatch) -> None:
    alias = f"wrap-{os.getpid()}"
    monkeypatch.delenv("COLLABLAB_LIMITER", raising=False)
    local = endpoint_limiter(alias, 3)
    assert type(local) is EndpointLimiter
    monkeypatch.setenv("COLLABLAB_LIMITER", f"file:{tmp_path}")
    shared = endpoint_limiter(alias, 3)
    assert isinstance(shared, SharedLimiter) and shared.local is local and shared is endpoint_limiter(alias)
    assert isinstance(shared.shared, FileLimiter) and shared.limit == 3

    async def two() -> None:
        async with shared:
            async with shared:
                assert (shared.in_flight, shared.shared.held) == (2, 2)

    asyncio.run(two())
    assert shared.max_in_flight == 2 and shared.in_flight == 0 and shared.shared.held == 0
    endpoint_limiter(alias, 1)
    assert shared.limit == 1 and shared.shared.limit == 1


def test_a_cancelled_wait_on_the_shared_part_gives_the_local_slot_back(tmp_path: Path) -> None:
    blocker = FileLimiter("cancel", 1, tmp_path)
    assert blocker.try_acquire()
    lim = SharedLimiter(EndpointLimiter("cancel", 2), FileLimiter("cancel", 1, tmp_path))

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(lim.acquire(), 0.2)

    asyncio.run(main())
    assert lim.in_flight == 0 and lim.shared.held == 0
    blocker.release()
    asyncio.run(lim.acquire())
    assert lim.in_flight == 1
    lim.release()


@pytest.mark.parametrize("value, expected", [("", None), ("  ", None), ("file:/tmp/x", ("file", "/tmp/x")),
                                             ("ray:ns", ("ray", "ns"))])
def test_limiter_config_parses(value: str, expected) -> None:
    assert limiter_config(value) == expected


@pytest.mark.parametrize("value", ["file:", "redis:x", "ray", "/tmp/x"])
def test_limiter_config_rejects_bad_values(value: str) -> None:
    with pytest.raises(ValueError, match=r"COLLABLAB_LIMITER: .* use file:<folder> or ray:<namespace>"):
        limiter_config(value)


def test_limiter_actor_counts_leases_and_expires_unrenewed_ones() -> None:
    """The Ray actor's logic, run as a plain object on one event loop."""
    async def main() -> None:
        actor = LimiterActor(lease_s=0.4)
        assert await actor.acquire("a", 2, "l1") and await actor.acquire("a", 2, "l2")
        third = asyncio.ensure_future(actor.acquire("a", 2, "l3"))
        await asyncio.sleep(0.05)
        assert not third.done() and actor.stats()["a"] == {"limit": 2, "held": 2, "waiting": 1, "peak": 2}
        actor.release("a", "l1")
        assert await asyncio.wait_for(third, 1)
        # l2 and l3 held; l3 is renewed, l2 is not: l2 expires and frees its slot for l4
        fourth = asyncio.ensure_future(actor.acquire("a", 2, "l4"))
        for _ in range(8):
            await asyncio.sleep(0.1)
            actor.renew("a", ["l3", "l4"])
        assert fourth.done() and fourth.result() is True
        assert actor.stats()["a"]["held"] == 2 and actor.stats()["a"]["peak"] == 2
        # a queued lease released before it was granted never takes a slot
        fifth = asyncio.ensure_future(actor.acquire("a", 2, "l5"))
        await asyncio.sleep(0.02)
        actor.release("a", "l5")
        assert await asyncio.wait_for(fifth, 1) is False
        # a release that overtakes its acquire
        actor.release("a", "l6")
        assert await actor.acquire("a", 2, "l6") is False
        assert actor.stats()["a"]["waiting"] == 0

    asyncio.run(main())
