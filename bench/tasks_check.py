"""How long `osw-studio tasks check` takes on the quick suite (tasks/test_small.json), and what warming helps.

Each configuration checks every task of the quick suite once (solution replayed, untouched start scored).
"Warm" starts a worker's next sandbox while the current one is in use; "cold" starts each when needed.
Prints a table (wall time, median seconds per task) and writes it into bench/results.json under
"tasks_check".
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import warnings
from pathlib import Path

from osw_studio.runner.check import check_tasks
from osw_studio.tasks.load import load_tasks

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tasks" / "test_small.json"
RESULTS = Path(__file__).with_name("results.json")
CONFIGS = (("1 env, cold", 1, False), ("1 env, warm", 1, True), ("2 envs, warm", 2, True))


async def measure(envs: int, warm: bool) -> dict[str, float]:
    entries = load_tasks([SUITE]).entries
    start = time.perf_counter()
    results = await check_tasks(entries, envs=envs, warm=warm)
    wall = time.perf_counter() - start
    failed = [r.line() for r in results if not r.passed]
    if failed:
        raise SystemExit("tasks failed the check:\n" + "\n".join(failed))
    return {
        "wall_s": round(wall, 2),
        "per_task_median_s": round(statistics.median(r.seconds for r in results), 2),
        "tasks": len(results),
    }


async def main() -> None:
    warnings.filterwarnings("ignore", message="Workbook contains no default style", category=UserWarning)
    rows = {label: await measure(envs, warm) for label, envs, warm in CONFIGS}
    count = next(iter(rows.values()))["tasks"]
    print(f"osw-studio tasks check on {SUITE.relative_to(ROOT)} ({count:g} tasks), one run each")
    print(f"{'configuration':<14} {'wall':>8} {'per task (median)':>18} {'vs cold':>8}")
    cold = rows[CONFIGS[0][0]]["wall_s"]
    for label, row in rows.items():
        wall, per_task = row["wall_s"], row["per_task_median_s"]
        print(f"{label:<14} {wall:>7.1f}s {per_task:>17.1f}s {cold / wall:>7.2f}x")
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data["tasks_check"] = {"suite": "tasks/test_small.json", **rows}
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
