"""Batch evaluation: 12 tasks on 3 local envs, a scripted model with random latency; env utilisation.

Each task's model is a scripted OpenAI-compatible server on 127.0.0.1 that answers the osworld agent's
three calls (click the terminal, type the command, DONE) after a random 0.5-2.5 s, as a hosted model
would. The batch runs with rollout-level scheduling (each env takes the next task as soon as its episode
ends, with a fresh desktop per task). From the same measured task times the script also works out what
lockstep waves of 3 (every env waits for the slowest task of its wave) would have used.

Prints a table and writes bench/results.json under "batch". Exits 1 when a result is missing or the
env utilisation is below 90%.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from osw_studio.agent.base import Agent  # noqa: E402
from osw_studio.agent.registry import make_agent  # noqa: E402
from osw_studio.envs.local import LocalProvider  # noqa: E402
from osw_studio.runner.batch import Batch  # noqa: E402
from osw_studio.runner.episode import EpisodeConfig  # noqa: E402
from osw_studio.runner.slot import EnvSlot, SlotConfig  # noqa: E402
from osw_studio.settings.model import Settings  # noqa: E402
from osw_studio.tasks.load import TaskEntry, load_tasks  # noqa: E402
from tests.batch.suite import WORDS, write_suite  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer, Reply  # noqa: E402

TASKS = 12
ENVS = 3
LATENCY = (0.5, 2.5)
TARGET = 0.90
RESULTS = Path(__file__).with_name("results.json")


def script(server: FakeOpenAIServer, index: int, rng: random.Random) -> None:
    """Queue one task's three model replies, each after a random latency."""
    name, word = f"word_{index:02d}.txt", WORDS[index % len(WORDS)]
    for text in (
        "I click into the terminal.\n```python\npyautogui.click(500, 340)\n```",
        f"Now I write the file.\n```python\npyautogui.typewrite('echo {word} > ~/Desktop/{name}\\n')\n```",
        "DONE",
    ):
        server.queue(Reply(text=text, delay=rng.uniform(*LATENCY)))


def lockstep_utilisation(times: list[float], envs: int) -> float:
    """Utilisation had the same tasks run in waves of ``envs``, each wave waiting for its slowest task."""
    waves = [times[i : i + envs] for i in range(0, len(times), envs)]
    return sum(times) / (sum(max(w) for w in waves) * envs)


async def main() -> int:
    rng = random.Random(12)
    with tempfile.TemporaryDirectory(prefix="osw-bench-batch-") as tmp:
        entries = load_tasks([write_suite(Path(tmp) / "suite", TASKS)]).entries
        servers = {e.task.id: FakeOpenAIServer().start() for e in entries}
        try:
            for entry in entries:
                script(servers[entry.task.id], int(entry.task.id[-2:]), rng)
            profiles = {
                task_id: Settings.model_validate(
                    {"model_provider": {"base_url": s.base_url, "model": "test-model", "max_retries": 0}}
                ).resolve_profile()
                for task_id, s in servers.items()
            }

            def agents(entry: TaskEntry) -> Agent:
                return make_agent(profiles[entry.task.id], task=entry.task, api_key="sk-bench")

            config = SlotConfig(
                episode=EpisodeConfig(max_steps=5),
                task_timeout=120,
                run_meta={"provider": "local", "action_space": "pyautogui", "observation_type": "screenshot"},
            )
            out = Path(tmp) / "out"
            provider = LocalProvider()
            slots = [EnvSlot(f"env-{i}", provider.create, agents, out / "runs", config) for i in (1, 2, 3)]
            started = time.perf_counter()
            summary = await Batch(entries, out, slots).run()
            wall = time.perf_counter() - started
            results = list((out / "results").rglob("result.txt"))
            run_results = list((out / "runs").glob("*/result.json"))
        finally:
            for server in servers.values():
                server.stop()

    times = [t.time for t in summary.tasks]
    solved = sum(t.success for t in summary.tasks)
    lockstep = lockstep_utilisation(times, ENVS)
    row = {
        "tasks": TASKS,
        "envs": ENVS,
        "model_latency_s": list(LATENCY),
        "solved": solved,
        "results_written": len(results),
        "run_stores_with_result": len(run_results),
        "wall_s": round(wall, 2),
        "task_median_s": round(statistics.median(times), 2),
        "env_utilisation": summary.env_utilisation,
        "lockstep_waves_utilisation": round(lockstep, 4),
        "target_utilisation": TARGET,
    }
    print(f"batch: {TASKS} tasks on {ENVS} local envs, scripted model latency {LATENCY[0]}-{LATENCY[1]} s")
    print(f"{'solved':>7} {'results':>8} {'wall':>7} {'task median':>12} {'utilisation':>12} {'lockstep':>9}")
    print(
        f"{solved:>7} {len(results):>8} {wall:>6.1f}s {row['task_median_s']:>11.2f}s "
        f"{100 * summary.env_utilisation:>11.1f}% {100 * lockstep:>8.1f}%"
    )
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data["batch"] = row
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")
    ok = len(results) == TASKS and len(run_results) == TASKS and summary.env_utilisation >= TARGET
    if not ok:
        print("target missed: every result written and env utilisation >= 90%", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
