"""Synthetic run stores, written through the real RunStoreWriter (used by tests and bench/export.py)."""

from __future__ import annotations

import base64
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osw_studio.core.actions import Action, Click, Done, DragTo, Hotkey, Scroll, Typing
from osw_studio.core.step import EpisodeResult, StepRecord, StepRequest, Usage
from osw_studio.core.task import Task
from osw_studio.runner.store import RunStoreWriter


def tiny_png(width: int, height: int, rgb: tuple[int, int, int] = (40, 90, 160), noise: int = 0) -> bytes:
    """A valid RGB PNG of one colour (plus ``noise`` varying rows, to make it less compressible)."""
    row = bytes(rgb) * width
    rows = []
    for y in range(height):
        if noise and y % 8 == 0:
            seed = (y * 2654435761 + noise) & 0xFFFFFFFF
            data = bytearray(row)
            for x in range(0, len(data), 7):
                seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
                data[x] = seed & 0xFF
            rows.append(b"\x00" + bytes(data))
        else:
            rows.append(b"\x00" + row)
    raw = b"".join(rows)

    def chunk(kind: bytes, payload: bytes) -> bytes:
        crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


@dataclass
class SyntheticRun:
    """What one synthetic run should hold."""

    task_id: str
    domain: str = "os"
    score: float | None = 1.0
    steps: int = 3
    model: str = "test-model"
    finished: bool = True
    # Step indexes (1-based) that a person edited, and that a person performed (takeover).
    edited: tuple[int, ...] = ()
    human: tuple[int, ...] = ()
    typed_text: str = "hello world"
    response_extra: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    started_at: float | None = None
    screen: tuple[int, int] = (64, 40)
    png: bytes | None = None
    first_click: tuple[int, int] | None = None
    # Record each model step's request as an OSWorld-style agent sends it (system prompt, the last
    # `history` rounds with their screenshots, the current screenshot), each step with a screen of its own.
    requests: bool = False
    history: int = 3
    # Mean token entropy of agent steps, by 1-based step index.
    entropy: dict[int, float] = field(default_factory=dict)


def _actions(i: int, run: SyntheticRun, last: bool) -> list[Action]:
    if last:
        return [Done()]
    w, h = run.screen
    cycle = i % 4
    if cycle == 1:
        if i == 1 and run.first_click:
            return [Click(x=run.first_click[0], y=run.first_click[1])]
        return [Click(x=(i * 7) % w, y=(i * 5) % h)]
    if cycle == 2:
        return [Typing(text=run.typed_text), Hotkey(keys=["ctrl", "s"])]
    if cycle == 3:
        return [DragTo(x=w - 1, y=h - 1, start_x=1, start_y=2)]
    return [Scroll(dy=-3, x=w // 2, y=h // 2)]


SYSTEM_PROMPT = "You operate a computer through pyautogui code. " * 60


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _request(run: SyntheticRun, i: int, screens: list[bytes], replies: list[str]) -> StepRequest:
    """The request an OSWorld-style agent sends at step ``i`` (1-based)."""
    ask = "Given the screenshot below, what is the next step?"
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT + run.task_id}]
    for j in range(max(0, i - 1 - run.history), i - 1):
        user = [
            {"type": "text", "text": ask},
            {"type": "image_url", "image_url": {"url": _data_url(screens[j])}},
        ]
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": replies[j]}]
    current = [
        {"type": "text", "text": ask},
        {"type": "image_url", "image_url": {"url": _data_url(screens[i - 1])}},
    ]
    messages.append({"role": "user", "content": current})
    params = {"model": run.model, "temperature": 0.5, "max_tokens": 1500, "stream": True}
    return StepRequest(messages=messages, params=params, prompt_source="synthetic")


def write_run(root: Path, run: SyntheticRun) -> Path:
    """Write one run store under ``root`` and return its folder."""
    task = Task.model_validate(
        {"id": run.task_id, "instruction": f"Do task {run.task_id}", "evaluator": {"func": "infeasible"}}
    )
    png = run.png or tiny_png(*run.screen)
    writer = RunStoreWriter.create(
        root,
        task,
        domain=run.domain,
        provider="local",
        model=run.model,
        agent="osworld",
        action_space="pyautogui",
        observation_type="screenshot",
        screen_size=run.screen,
        settings=run.settings,
        secrets=run.secrets,
    )
    if run.started_at is not None:
        writer.meta = writer.meta.model_copy(update={"started_at": run.started_at})
        writer._write_meta()
    screens: list[bytes] = []
    replies: list[str] = []
    with writer:
        for i in range(1, run.steps + 1):
            actions = _actions(i, run, last=i == run.steps and run.finished)
            thought = f"Step {i}: I should act on the screen."
            code = "; ".join(a.kind for a in actions)
            response = f"{thought}\n```python\n{code}\n```{run.response_extra}"
            if run.requests:
                png = tiny_png(*run.screen, noise=i)
            screens.append(png)
            if i in run.human:
                step = StepRecord(index=i, source="human", verdict="human", executed=actions)
            elif i in run.edited:
                proposed: list[Action] = [Click(x=1, y=1)]
                step = StepRecord(
                    index=i,
                    verdict="edited",
                    response=response,
                    thought=thought,
                    proposed=proposed,
                    executed=actions,
                    usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15),
                    coordinate_mode="abs",
                    request=_request(run, i, screens, replies) if run.requests else None,
                )
            else:
                step = StepRecord(
                    index=i,
                    response=response,
                    thought=thought,
                    proposed=actions,
                    executed=actions,
                    timings={"predict": 0.5, "execute": 0.1},
                    coordinate_mode="abs",
                    request=_request(run, i, screens, replies) if run.requests else None,
                    entropy=run.entropy.get(i),
                )
            replies.append(response if i not in run.edited else "```python\nedited\n```")
            writer.write_step(step, png, accessibility_tree="<desktop-frame/>" if i == 1 else None)
        if run.finished:
            writer.write_final_screen(png)
            score = run.score
            writer.finish(
                EpisodeResult(
                    success=score == 1.0,
                    score=score,
                    steps=run.steps,
                    domain=run.domain,
                    task_id=run.task_id,
                    model=run.model,
                    status="finished" if score is not None else "error",
                    error=None if score is not None else "evaluation failed",
                )
            )
    return writer.path
