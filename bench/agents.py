"""Request building time per step, per agent profile, image encoding excluded.

Each profile runs a 15-step episode against no model: the screenshot of every step is encoded once
beforehand (as the agent's worker thread does), then the agent builds the step's messages (system prompt,
history window, accessibility table, past replies) and the step is recorded, as the runner would. The
figures are, per step, the median over trials, then their median and maximum over the steps, in
milliseconds of wall clock and of the thread's CPU time (steadier on a busy machine); the target is
20 ms. Prints a table and writes bench/results.json under "agents".

Profiles with ``prompts: reference`` are measured too when OSWorld's package can be read (the
``.venv-ref`` beside the checkout, ``OSW_REFERENCE_SITE`` set to a side environment's site-packages or an
OSWorld checkout, or desktop-env installed): the Qwen3-VL profile then evaluates OSWorld's prompt-building
code at every step. DART-GUI's reference profile needs an OSWorld checkout (``OSW_REFERENCE_SITE``).

Usage: python bench/agents.py
"""

from __future__ import annotations

import io
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from osw_studio.agent.images import prepare_image  # noqa: E402
from osw_studio.agent.model_client import ModelClient  # noqa: E402
from osw_studio.agent.osworld import OSWorldAgent  # noqa: E402
from osw_studio.agent.reference import reference_site  # noqa: E402
from osw_studio.agent.registry import agent_class  # noqa: E402
from osw_studio.core.actions import Click  # noqa: E402
from osw_studio.core.agent_specs import OWN_LANGUAGES  # noqa: E402
from osw_studio.core.observation import Observation  # noqa: E402
from osw_studio.core.step import StepRecord  # noqa: E402
from osw_studio.settings import Settings  # noqa: E402

RESULTS = ROOT / "bench" / "results.json"
STEPS = 15
TRIALS = 5
TARGET_MS = 20.0

PROFILES: dict[str, dict[str, Any]] = {
    f"osworld {obs} {space}": {"agent": "osworld", "observation_type": obs, "action_space": space}
    for obs in ("screenshot", "a11y_tree", "screenshot_a11y_tree")
    for space in ("pyautogui", "computer_13")
}
PROFILES["uitars-1.5"] = {"preset": "uitars-1.5", "prompts": "own"}
PROFILES["dart-gui-7b"] = {"preset": "dart-gui-7b", "prompts": "own"}
PROFILES["uitars-1.5 1280x720"] = {"preset": "uitars-1.5", "prompts": "own", "screenshot_size": "1280x720"}
PROFILES["qwen3-vl"] = {"preset": "qwen3-vl", "prompts": "own"}
PROFILES["qwen3-vl 1280x720"] = {"preset": "qwen3-vl", "prompts": "own", "screenshot_size": "1280x720"}
PROFILES["opencua-7b"] = {"preset": "opencua-7b", "prompts": "own"}
PROFILES["qwen2.5-vl"] = {"preset": "qwen2.5-vl", "prompts": "own"}
PROFILES["evocua-s2"] = {"preset": "evocua-s2", "prompts": "own"}
PROFILES["uitars-1.5-v2"] = {"preset": "uitars-1.5-v2", "prompts": "own"}
PROFILES["gui-owl-1.5"] = {"preset": "gui-owl-1.5", "prompts": "own"}
PROFILES["jedi-7b"] = {"preset": "jedi-7b", "prompts": "own"}
PROFILES["dart-gui-7b 1280x720"] = {"preset": "dart-gui-7b", "prompts": "own", "screenshot_size": "1280x720"}
if reference_site() is not None:
    for preset in ("osworld", "uitars-1.5", "qwen3-vl", "qwen2.5-vl", "opencua-7b"):
        PROFILES[f"{preset} reference prompts"] = {"preset": preset}
if reference_site("mm_agents/dart_gui_agent.py") is not None:  # an OSWorld checkout, not desktop-env 1.0.2
    PROFILES["dart-gui-7b reference prompts"] = {"preset": "dart-gui-7b"}
if reference_site("mm_agents/evocua/evocua_agent.py") is not None:
    PROFILES["evocua-s2 reference prompts"] = {"preset": "evocua-s2"}
if reference_site("mm_agents/uitars15_v2.py") is not None:
    PROFILES["uitars-1.5-v2 reference prompts"] = {"preset": "uitars-1.5-v2"}
if reference_site("mm_agents/owl15_agent.py") is not None:
    PROFILES["gui-owl-1.5 reference prompts"] = {"preset": "gui-owl-1.5"}
if reference_site("mm_agents/jedi_7b_agent.py") is not None:
    PROFILES["jedi-7b reference prompts"] = {"preset": "jedi-7b"}

REPLY = {
    "pyautogui": "I click Save.\n```python\npyautogui.click(100, 40)\n```",
    "computer_13": '```json\n{"action_type": "CLICK", "x": 100, "y": 40}\n```',
    "uitars": "Thought: click Save.\nAction: click(start_box='(100,40)')",
    "qwen3vl": 'Action: Click Save.\n<tool_call>\n{"name": "computer_use", "arguments": '
    '{"action": "left_click", "coordinate": [52, 37]}}\n</tool_call>',
    "opencua": "## Thought:\nSave it.\n\n## Action:\nClick Save.\n\n## Code:\n```python\n"
    "pyautogui.click(x=100, y=40)\n```",
}


def tree(rows: int = 400) -> str:
    """An accessibility tree of ``rows`` kept nodes (a busy office window has a few hundred)."""
    ns = (
        'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
        'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component"'
    )
    nodes = "".join(
        f'<push-button name="Button {i}" st:showing="true" st:visible="true" st:enabled="true" '
        f'cp:screencoord="({i % 1900}, {i % 1000})" cp:size="(40, 20)"/>'
        for i in range(rows)
    )
    return f"<desktop-frame {ns}>{nodes}</desktop-frame>"


def screenshot() -> bytes:
    buf = io.BytesIO()
    Image.effect_noise((1920, 1080), 40).convert("RGB").save(buf, "PNG")
    return buf.getvalue()


def episode_ms(config: dict[str, Any], shot: bytes, xml: str) -> tuple[list[float], list[float]]:
    """Milliseconds (wall clock, and CPU of this thread) to build each step's messages over one episode."""
    settings = Settings.model_validate(
        {"model_provider": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}, "profiles": {"p": config}}
    )
    profile = settings.resolve_profile("p")
    client = ModelClient(base_url=profile.base_url, model=profile.model, max_retries=0)
    agent: Any = agent_class(profile.agent)(profile, client=client)  # type: ignore[call-arg]
    own = OWN_LANGUAGES.get(profile.agent, profile.action_space)  # jedi: pyautogui code, its own agent
    reply = REPLY[agent.action_space if isinstance(agent, OSWorldAgent) else own]
    agent.reset()
    observation = Observation(screenshot=shot, width=1920, height=1080, accessibility_tree=xml)
    size = agent.image_size(observation.size)
    image = prepare_image(shot, size=size, fmt="png")  # encoding is excluded: done once, up front
    image.data_url()  # (its base64 too)
    times: list[float] = []
    cpu: list[float] = []
    for index in range(1, STEPS + 1):
        start, start_cpu = time.perf_counter(), time.thread_time()
        agent.build_messages("Save the document as report.odt", observation, image)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        click = [Click(x=100, y=40)]
        agent.record(
            StepRecord(index=index, response=reply, thought="Click Save.", proposed=click, executed=click)
        )
    return times, cpu


def main() -> int:
    shot, xml = screenshot(), tree()
    figures: dict[str, dict[str, float]] = {}
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs (wall times grow with it; CPU times less)")
    print(f"{'profile':<40}{'wall median ms':>16}{'wall max ms':>13}{'CPU median ms':>15}{'CPU max ms':>12}")
    for name, config in PROFILES.items():
        trials = [episode_ms(config, shot, xml) for _ in range(TRIALS)]
        wall = [statistics.median(t[0][i] for t in trials) for i in range(STEPS)]
        cpu = [statistics.median(t[1][i] for t in trials) for i in range(STEPS)]
        row = {
            "wall_median_ms": round(statistics.median(wall), 3),
            "wall_max_ms": round(max(wall), 3),
            "cpu_median_ms": round(statistics.median(cpu), 3),
            "cpu_max_ms": round(max(cpu), 3),
        }
        figures[name] = row
        flag = "" if row["cpu_max_ms"] <= TARGET_MS else "  over target"
        print(
            f"{name:<40}{row['wall_median_ms']:>16.3f}{row['wall_max_ms']:>13.3f}"
            f"{row['cpu_median_ms']:>15.3f}{row['cpu_max_ms']:>12.3f}{flag}"
        )
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["agents"] = {
        "steps": STEPS,
        "trials": TRIALS,
        "statistic": "median over trials per step, then median and max over the steps",
        "target_ms": TARGET_MS,
        "load_average": round(load, 2),
        "profiles": figures,
    }
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
