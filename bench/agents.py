"""Request building time per step, per agent profile, image encoding excluded.

Each profile runs a 15-step episode against no model: the screenshot of every step is encoded once
beforehand (as the agent's worker thread does), then the agent builds the step's messages (system prompt,
history window, accessibility table, past replies) and the step is recorded, as the runner would. The
figure is the median over steps of each profile's median over trials, in milliseconds; the target is
20 ms. Prints a table and writes bench/results.json under "agents".

Usage: python bench/agents.py
"""

from __future__ import annotations

import io
import json
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
from osw_studio.agent.uitars import UITarsAgent  # noqa: E402
from osw_studio.core.actions import Click  # noqa: E402
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

REPLY = {
    "pyautogui": "I click Save.\n```python\npyautogui.click(100, 40)\n```",
    "computer_13": '```json\n{"action_type": "CLICK", "x": 100, "y": 40}\n```',
    "uitars": "Thought: click Save.\nAction: click(start_box='(100,40)')",
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


def episode_ms(config: dict[str, Any], shot: bytes, xml: str) -> list[float]:
    """Milliseconds to build each step's messages over one episode."""
    settings = Settings.model_validate(
        {"model_provider": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}, "profiles": {"p": config}}
    )
    profile = settings.resolve_profile("p")
    client = ModelClient(base_url=profile.base_url, model=profile.model, max_retries=0)
    agent: OSWorldAgent | UITarsAgent
    if profile.agent == "uitars":
        agent = UITarsAgent(profile, client=client)
        reply = REPLY["uitars"]
    else:
        agent = OSWorldAgent(profile, client=client)
        reply = REPLY[agent.action_space]
    agent.reset()
    observation = Observation(screenshot=shot, width=1920, height=1080, accessibility_tree=xml)
    size = agent.image_size(observation.size)
    image = prepare_image(shot, size=size, fmt="png")  # encoding is excluded: done once, up front
    image.data_url()  # (its base64 too)
    times: list[float] = []
    for index in range(1, STEPS + 1):
        start = time.perf_counter()
        agent.build_messages("Save the document as report.odt", observation, image)
        times.append((time.perf_counter() - start) * 1000)
        click = [Click(x=100, y=40)]
        agent.record(StepRecord(index=index, response=reply, proposed=click, executed=click))
    return times


def main() -> int:
    shot, xml = screenshot(), tree()
    figures: dict[str, dict[str, float]] = {}
    print(f"{'profile':<40}{'median ms':>11}{'last step ms':>14}{'max ms':>9}")
    for name, config in PROFILES.items():
        trials = [episode_ms(config, shot, xml) for _ in range(TRIALS)]
        per_step = [statistics.median(t[i] for t in trials) for i in range(STEPS)]
        row = {
            "median_ms": round(statistics.median(per_step), 3),
            "last_step_ms": round(per_step[-1], 3),
            "max_ms": round(max(per_step), 3),
        }
        figures[name] = row
        flag = "" if row["max_ms"] <= TARGET_MS else "  over target"
        print(f"{name:<40}{row['median_ms']:>11.3f}{row['last_step_ms']:>14.3f}{row['max_ms']:>9.3f}{flag}")
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["agents"] = {
        "steps": STEPS,
        "trials": TRIALS,
        "statistic": "median over trials per step",
        "target_ms": TARGET_MS,
        "profiles": figures,
    }
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
