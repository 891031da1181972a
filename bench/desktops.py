"""The OSWorld desktop's speed and size: the local sandbox and the Docker guest image, in the same run.

For each provider (``local`` with ``desktop=osworld``; ``docker`` with ``desktop=osworld``, the image of
``packaging/guest-image/build.sh --desktop osworld``, on the engine at ``DOCKER_HOST``):

- **ready**: ``create()`` until the guest server answers (median of ``--runs``);
- **reset**: a fresh guest for the next task, as ``tasks check`` and batches get one: the sandbox is
  closed and a new one started; the container is recreated (``DockerEnv.reset``);
- **setup**: one OSWorld task's setup on a fresh guest (Chrome started as ``google-chrome
  --remote-debugging-port`` plus ``socat``, then waited for);
- **memory**: PSS and RSS summed over the env's process tree (the sandbox's processes; the container's),
  on an idle desktop and with that task's browser open;
- **suite**: ``tasks check`` of a fixed sample of OSWorld's tasks that need no downloaded file on
  ``--envs N`` for each N of ``--envs``: wall time, tasks per minute, how many passed, and the peak of
  the env processes' PSS while it ran (sampled every second; a worker holds its current guest and the
  next one it warms). From these, how many envs this machine holds: by memory (80% of MemTotal over
  the PSS of one env with a task open) and by throughput (the N past which tasks per minute stop
  rising by 10%).

The load average is printed before and after: figures taken on a busy machine say so. Prints a table
and writes bench/results.json under "desktops". ``--providers local`` skips Docker (as does a missing
image, with the reason printed).

    python bench/desktops.py [--providers local docker] [--envs 1 2 3 4] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from osw_studio.envs.base import Env  # noqa: E402
from osw_studio.envs.local import descendants  # noqa: E402
from osw_studio.envs.registry import make_env  # noqa: E402
from osw_studio.runner.check import check_tasks  # noqa: E402
from osw_studio.tasks.load import TaskEntry, load_tasks  # noqa: E402

RESULTS = Path(__file__).with_name("results.json")
OSWORLD = Path(
    os.environ.get("OSW_OSWORLD_EXAMPLES", ROOT.parent / "shared" / "osworld" / "evaluation_examples")
)
SETUP_TASK = "chrome/bb5e4c0d-f964-439c-97b6-bdb9747de3f4"
"""Its setup starts google-chrome with DevTools and socat, as most of OSWorld's Chrome tasks do."""
SAMPLE = (
    "os/13584542-872b-42d8-b299-866967b5c3ef",
    "os/3ce045a0-877b-42aa-8d2c-b4a863336ab8",
    "gimp/7b7617bd-57cc-468e-9c91-40c4ec2bcb3d",
    "libreoffice_impress/2cd43775-7085-45d8-89fa-9e35c0a915cf",
    "chrome/bb5e4c0d-f964-439c-97b6-bdb9747de3f4",
    "chrome/030eeff7-b492-4218-b312-701ec99ee0cc",
    "vlc/215dfd39-f493-4bc3-a027-8a97d72c61bf",
    "multi_apps/3c8f201a-009d-4bbe-8b65-a6f8b35bb57f",
)
"""OSWorld tasks that need no downloaded file, across the desktop's applications."""
PROVIDERS: dict[str, dict[str, Any]] = {
    "local": {"desktop": "osworld"},
    "docker": {"mode": "studio", "desktop": "osworld"},
}
READY_TIMEOUT = 120.0
"""Seconds a guest may take to start: generous, so that a busy machine gives slow figures, not errors."""


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def mem_total_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024
    return 0.0


def memory_mb(pids: set[int]) -> tuple[float, float]:
    """(PSS, RSS) in MB summed over ``pids``, from ``/proc/PID/smaps_rollup``."""
    pss = rss = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("Pss:"):
                pss += int(line.split()[1])
            elif line.startswith("Rss:"):
                rss += int(line.split()[1])
    return round(pss / 1024, 1), round(rss / 1024, 1)


def container_pids(container: Any) -> set[int]:
    """The processes of a running container (its init and everything under it), as host pids."""
    container.reload()
    root = int(container.attrs["State"]["Pid"] or 0)
    return {root} | descendants({root}) if root else set()


def env_pids(env: Env) -> set[int]:
    pids = getattr(env, "pids", None)
    if callable(pids):
        return set(pids())
    container = getattr(env, "container", None)
    return container_pids(container) if container is not None else set()


def live_env_pids(provider: str) -> list[set[int]]:
    """The process trees of every env of ``provider`` this process (or the Docker engine) runs now."""
    if provider == "local":
        from osw_studio.envs.local import _LIVE

        return [session.pids() for session in list(_LIVE)]
    import docker

    from osw_studio.envs.docker_spec import LABEL

    client = docker.from_env()
    try:
        found = []
        for container in client.containers.list(filters={"label": LABEL}):
            try:
                found.append(container_pids(container))
            except Exception:  # gone between the listing and the look
                continue
        return found
    finally:
        client.close()


class Sampler:
    """Samples the PSS of a provider's envs every second in a thread; keeps the peak."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.peak_total_mb = 0.0
        self.peak_envs = 0
        self.per_env_mb: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            trees = [t for t in live_env_pids(self.provider) if t]
            if not trees:
                continue
            sizes = [memory_mb(t)[0] for t in trees]
            self.peak_total_mb = max(self.peak_total_mb, sum(sizes))
            self.peak_envs = max(self.peak_envs, len(trees))
            self.per_env_mb.extend(sizes)


async def timed(step: Awaitable[Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = await step
    return time.perf_counter() - start, value


async def one_env(provider: str, options: dict[str, Any], task: TaskEntry, runs: int) -> dict[str, Any]:
    """Ready, reset, setup and memory figures of one provider."""
    ready, resets, setups, idle, busy = [], [], [], [], []
    create: Callable[[], Awaitable[Env]] = lambda: make_env(provider, **options)  # noqa: E731
    env = await create()  # a first start fills the page cache
    await env.close()
    for _ in range(runs):
        seconds, env = await timed(create())
        ready.append(seconds)
        try:
            idle.append(memory_mb(env_pids(env)))
            seconds, _ = await timed(env.reset(task.task, task_dir=task.path.parent))
            setups.append(seconds)
            await asyncio.sleep(2)  # let the browser settle before weighing it
            busy.append(memory_mb(env_pids(env)))
            # A fresh guest for the next task.
            start = time.perf_counter()
            if provider == "docker":
                await env.reset(None)
            else:
                await env.close()
                env = await create()
            resets.append(time.perf_counter() - start)
        finally:
            await env.close()

    def median(values: list[float]) -> float:
        return round(statistics.median(values), 2)

    return {
        "ready_s": median(ready),
        "ready_max_s": round(max(ready), 2),
        "reset_s": median(resets),
        "setup_s": median(setups),
        "idle_pss_mb": median([m[0] for m in idle]),
        "idle_rss_mb": median([m[1] for m in idle]),
        "task_pss_mb": median([m[0] for m in busy]),
        "task_rss_mb": median([m[1] for m in busy]),
    }


async def suite(
    provider: str, options: dict[str, Any], entries: list[TaskEntry], envs: int
) -> dict[str, Any]:
    """``tasks check`` of the sample on ``envs`` guests: throughput and peak memory."""
    with Sampler(provider) as sampler:
        start = time.perf_counter()
        results = await check_tasks(entries, envs=envs, provider=provider, require_solution=False, **options)
        wall = time.perf_counter() - start
    passed = sum(r.status == "PASS" for r in results)
    failed = [r.line() for r in results if r.status == "FAIL"]
    return {
        "envs": envs,
        "tasks": len(results),
        "passed": passed,
        "failed": failed,
        "wall_s": round(wall, 1),
        "tasks_per_min": round(len(results) / wall * 60, 2),
        "peak_pss_mb": round(sampler.peak_total_mb, 1),
        "peak_envs": sampler.peak_envs,
        "median_env_pss_mb": round(statistics.median(sampler.per_env_mb), 1) if sampler.per_env_mb else None,
    }


def why_not(provider: str, options: dict[str, Any]) -> str | None:
    """Why ``provider`` cannot be measured here, or None."""
    if provider == "local":
        from osw_studio.envs.desktops import get_profile

        missing = get_profile("osworld").missing()
        return f"missing {', '.join(missing)} (make setup-osworld)" if missing else None
    try:
        import docker

        from osw_studio.envs.docker_spec import DockerGuestConfig

        client = docker.from_env()
        try:
            client.images.get(DockerGuestConfig(**options).image_name)
        finally:
            client.close()
    except Exception as exc:
        return f"no Docker image ({exc}); build it: packaging/guest-image/build.sh --desktop osworld"
    return None


def capacity(row: dict[str, Any], suites: list[dict[str, Any]]) -> dict[str, Any]:
    """How many envs this machine holds: by memory, and where throughput stops rising."""
    by_memory = int(0.8 * mem_total_mb() // row["task_pss_mb"]) if row.get("task_pss_mb") else None
    best = suites[0]["envs"] if suites else None
    for before, after in itertools.pairwise(suites):
        if after["tasks_per_min"] >= before["tasks_per_min"] * 1.1:
            best = after["envs"]
        else:
            break
    return {"by_memory": by_memory, "by_throughput": best}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--providers", nargs="+", default=list(PROVIDERS), choices=list(PROVIDERS))
    parser.add_argument("--envs", nargs="+", type=int, default=[1, 2, 3, 4])
    parser.add_argument("--runs", type=int, default=5, help="starts per provider for the medians")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message="Workbook contains no default style", category=UserWarning)
    entries = load_tasks([OSWORLD / "examples" / f"{name}.json" for name in SAMPLE]).entries
    setup_task = next(e for e in entries if SETUP_TASK.endswith(e.task.id))
    load_before = load_average()
    rows: dict[str, Any] = {}
    for provider in args.providers:
        options = {**PROVIDERS[provider], "ready_timeout": READY_TIMEOUT}
        reason = why_not(provider, options)
        if reason:
            print(f"skipping {provider}: {reason}", flush=True)
            continue
        print(f"measuring {provider} ...", flush=True)
        started = load_average()
        row = await one_env(provider, options, setup_task, args.runs)
        row["suite"] = [await suite(provider, options, entries, n) for n in args.envs]
        row["holds"] = capacity(row, row["suite"])
        row["load_average"] = {"before": started, "after": load_average()}
        row["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        rows[provider] = row
    load_after = load_average()

    print(
        f"\nOSWorld desktop, median of {args.runs} (load average before {load_before}, after {load_after}; "
        f"{os.cpu_count()} cores, {mem_total_mb() / 1024:.0f} GB)"
    )
    print(
        f"{'provider':<8} {'ready':>7} {'reset':>7} {'setup':>7} {'idle PSS':>9} {'idle RSS':>9} "
        f"{'task PSS':>9} {'task RSS':>9}"
    )
    for name, row in rows.items():
        print(
            f"{name:<8} {row['ready_s']:>6.2f}s {row['reset_s']:>6.2f}s {row['setup_s']:>6.2f}s "
            f"{row['idle_pss_mb']:>7.0f}MB {row['idle_rss_mb']:>7.0f}MB "
            f"{row['task_pss_mb']:>7.0f}MB {row['task_rss_mb']:>7.0f}MB"
        )
    print(f"\ntasks check of {len(entries)} OSWorld tasks with no downloaded file (setup + untouched score)")
    print(
        f"{'provider':<8} {'envs':>4} {'wall':>8} {'tasks/min':>10} {'passed':>7} {'peak PSS':>9} "
        f"{'peak envs':>9} {'PSS/env':>8}"
    )
    for name, row in rows.items():
        for s in row["suite"]:
            per_env = f"{s['median_env_pss_mb']:.0f}MB" if s["median_env_pss_mb"] else "-"
            print(
                f"{name:<8} {s['envs']:>4} {s['wall_s']:>7.1f}s {s['tasks_per_min']:>10.2f} "
                f"{s['passed']:>3}/{s['tasks']:<3} {s['peak_pss_mb']:>7.0f}MB "
                f"{s['peak_envs']:>9} {per_env:>8}"
            )
    for name, row in rows.items():
        holds = row["holds"]
        print(
            f"{name}: this machine holds ~{holds['by_memory']} envs by memory (80% of RAM / task PSS); "
            f"throughput stops rising past {holds['by_throughput']} env(s)"
        )
        for s in row["suite"]:
            for line in s["failed"]:
                print(f"  {name} --envs {s['envs']}: {line}")
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    # A run of some providers keeps the rows of the others (each row says when and under what load).
    kept = {k: v for k, v in data.get("desktops", {}).items() if k in PROVIDERS and k not in rows}
    data["desktops"] = {
        "runs": args.runs,
        "sample": list(SAMPLE),
        "setup_task": SETUP_TASK,
        "cores": os.cpu_count(),
        "mem_total_mb": round(mem_total_mb()),
        **kept,
        **rows,
    }
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
