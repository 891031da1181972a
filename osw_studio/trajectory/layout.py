"""The shape of a run store on disk, shared by its writer (the runner) and its reader.

A run store is one folder ``runs/<run-id>/``::

    run.json          RunMeta: the task, a settings snapshot without secrets, provider, model, versions, times
    steps.jsonl       one StepRecord per line, appended and fsynced as each step ends
    screens/          step_0001.png (the screen step 1 acted on), step_0001.xml (its accessibility tree),
                      final.png (the screen when the episode ended, when saved)
    result.json       EpisodeResult, written when the episode ends; missing means interrupted

Run ids sort by start time: ``20250102T030405Z-<short task id>-<random>``.

Examples:
    >>> screen_name(7)
    'step_0007.png'
    >>> screen_name(12, "jpeg"), tree_name(12)
    ('step_0012.jpg', 'step_0012.xml')
    >>> short_task_id("0bf05a7d-b28b-44d2-955a-50b41e24012a")
    '0bf05a7d'
    >>> short_task_id("../My Task!")
    'my-task'
"""

from __future__ import annotations

import re
import secrets
import struct
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

RUN_JSON = "run.json"
STEPS_JSONL = "steps.jsonl"
RESULT_JSON = "result.json"
SCREENS = "screens"
FINAL_SCREEN = "final"
SCHEMA_VERSION = 1
MAX_SCREEN = 65535
"""The largest screen side a run may record (X's limit is 32767): larger values mark a damaged run."""
LAST_TIME = 253402300799.0
"""The last second of the year 9999: a later (or NaN, or negative) time marks a damaged run."""


class RunMeta(BaseModel):
    """What ``run.json`` holds.

    Attributes:
        schema_version: The run store layout version.
        run_id: The folder name.
        task_id: The task's id.
        domain: The task's domain (OSWorld folder name), when known.
        instruction: The task's instruction.
        task: The whole task as loaded (OSWorld JSON).
        provider: Which provider made the guest (``local``, ``remote``, ``docker``).
        model: The model that acted (or ``replay`` / ``human``).
        agent: The agent kind (``osworld``, ``uitars``, ``replay``, ``human``).
        action_space: The action space the agent spoke (``pyautogui``, ``computer_13``, ...).
        observation_type: What the agent saw (``screenshot``, ``a11y_tree``, ...).
        screen_width: Guest screen width in pixels (the space of every stored action).
        screen_height: Guest screen height in pixels.
        settings: A snapshot of the settings in force, without secrets.
        versions: Versions of OSW Studio, Python and the platform.
        started_at: When the run began (epoch seconds).
        finished_at: When the result was written.
    """

    model_config = ConfigDict(extra="allow")

    schema_version: int = SCHEMA_VERSION
    run_id: str
    task_id: str
    domain: str | None = None
    instruction: str = ""
    task: dict[str, Any] = Field(default_factory=dict)
    provider: str | None = None
    model: str | None = None
    agent: str | None = None
    action_space: str | None = None
    observation_type: str | None = None
    screen_width: int | None = Field(default=None, ge=1, le=MAX_SCREEN)
    screen_height: int | None = Field(default=None, ge=1, le=MAX_SCREEN)
    settings: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    started_at: float = Field(default_factory=time.time, ge=0, le=LAST_TIME)
    finished_at: float | None = Field(default=None, ge=0, le=LAST_TIME)


def short_task_id(task_id: str, length: int = 8) -> str:
    """A file-name-safe prefix of a task id, for run ids."""
    slug = re.sub(r"[^a-z0-9]+", "-", task_id.lower()).strip("-")
    return slug[:length].strip("-") or "task"


def new_run_id(task_id: str, now: float | None = None) -> str:
    """A fresh run id that sorts by start time (UTC, to the millisecond) and names its task.

    Milliseconds matter: a retried task's second attempt often starts within the second its
    first one ended, and history, stats and ``--retry-errors`` order attempts by run id.

    >>> new_run_id("abc", now=0.25)[:24]
    '19700101T000000.250Z-abc'
    >>> new_run_id("abc", now=5.1) < new_run_id("abc", now=5.2)  # within one second too
    True
    """
    when = time.time() if now is None else now
    millis = min(int((when % 1) * 1000), 999)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(when)) + f".{millis:03d}Z"
    return f"{stamp}-{short_task_id(task_id)}-{secrets.token_hex(3)}"


def image_ext(image_format: str) -> str:
    """The file extension for an image format name.

    >>> image_ext("JPEG"), image_ext("png")
    ('jpg', 'png')
    """
    fmt = image_format.lower()
    return "jpg" if fmt in ("jpeg", "jpg") else fmt


def screen_name(index: int, image_format: str = "png") -> str:
    """File name (under ``screens/``) of the screen step ``index`` acted on."""
    return f"step_{index:04d}.{image_ext(image_format)}"


def tree_name(index: int) -> str:
    """File name (under ``screens/``) of step ``index``'s accessibility tree."""
    return f"step_{index:04d}.xml"


def image_size(data: bytes) -> tuple[int, int] | None:
    r"""``(width, height)`` from a PNG or JPEG header, without decoding the image.

    >>> head = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR"
    >>> image_size(head + (1920).to_bytes(4, "big") + (1080).to_bytes(4, "big"))
    (1920, 1080)
    >>> image_size(b"nope") is None
    True
    """
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                return None
            marker = data[i + 1]
            length = int.from_bytes(data[i + 2 : i + 4], "big")
            # SOF0..SOF15 carry the size, except DHT (C4), JPG (C8) and DAC (CC).
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                height, width = struct.unpack(">HH", data[i + 5 : i + 9])
                return int(width), int(height)
            i += 2 + length
    return None
