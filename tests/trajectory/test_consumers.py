"""Exports read by the trainers that consume them: TRL's vision DPO collator and LLaMA-Factory's converter.

Both import torch, so they run in the consumers side environment (.venv-consumers, made by
scripts/setup-consumers.sh; OSW_CONSUMERS_PYTHON names another interpreter) through
tests/trajectory/consumerworker.py, one process for every export here. A recorded model-agent run (one
edited step, one takeover step) is exported for each agent profile; the worker reports what the
consumers made of the exports, and the tests compare that with the requests the model was sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from osw_studio.trajectory.export import export_options, export_runs
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.recorded_run import RecordedRun, record_run
from tests.trajectory.test_recorded_exports import PROFILES, correction

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().with_name("consumerworker.py")

pytestmark = pytest.mark.timeout(900)


def consumers_python() -> Path:
    """The side environment's interpreter; the tests fail under CI and skip elsewhere when it is missing."""
    configured = os.environ.get("OSW_CONSUMERS_PYTHON")
    python = Path(configured) if configured else ROOT / ".venv-consumers" / "bin" / "python"
    if not python.is_file():
        message = f"the consumers side environment is missing ({python}); run scripts/setup-consumers.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return python


def sent_images(request: dict[str, Any]) -> int:
    """How many images a recorded request carried."""
    return sum(
        1
        for m in request["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    )


@pytest.fixture(scope="module")
def consumed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[RecordedRun, dict[str, Any]]]:
    """Per agent profile: the recorded run, and what the consumers made of its exports."""
    python = consumers_python()
    runs: dict[str, RecordedRun] = {}
    args: list[str] = []
    for name, settings in PROFILES.items():
        root = tmp_path_factory.mktemp(f"consumers-{name}")
        with FakeOpenAIServer(models=["test-model"]) as server:
            runs[name] = asyncio.run(record_run(server, root, name.split("-")[0], **settings))
        for fmt, kind in (("sft-sharegpt", "sharegpt"), ("preference", "preference")):
            export_runs([runs[name].path], fmt, root / fmt, export_options())
            args += [kind, str(root / fmt)]
    proc = subprocess.run(
        [str(python), str(WORKER), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path_factory.mktemp("consumer-scratch"),
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        timeout=840,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    out: dict[str, tuple[RecordedRun, dict[str, Any]]] = {}
    for name in PROFILES:
        for result in results:
            if f"consumers-{name}" in Path(result["folder"]).parent.name:
                out[f"{name}/{result['kind']}"] = (runs[name], result)
    assert len(out) == 2 * len(PROFILES)
    return out


@pytest.mark.parametrize("profile", list(PROFILES))
def test_llamafactory_converts_every_sharegpt_sample(
    consumed: dict[str, tuple[RecordedRun, dict[str, Any]]], profile: str
) -> None:
    run, result = consumed[f"{profile}/sharegpt"]
    assert result["formatting"] == "sharegpt" and result["load_from"] == "file"
    rows = result["rows"]
    assert len(rows) == len(run.requests) + 1  # every model step, and the person's takeover step
    for row in rows:
        # The converter keeps a conversation only when its turns alternate user/assistant and end with
        # the assistant; it empties a broken one.
        assert row["roles"] and row["roles"][-1] == "assistant"
        assert row["roles"] == ["user", "assistant"] * (len(row["roles"]) // 2)
        # LLaMA-Factory's multimodal plugin refuses a sample whose <image> tokens and images differ.
        assert row["image_tokens"] == len(row["images"]) >= 1
        # Media paths resolved against the dataset folder, as its converter does.
        assert all(Path(image).is_file() and Path(image).is_absolute() for image in row["images"])
    model_rows = [r for n, r in enumerate(rows) if n != 2]  # the third step is the person's
    assert [len(r["images"]) for r in model_rows] == [sent_images(q) for q in run.requests]
    assert rows[0]["response"] == run.replies[0]


@pytest.mark.parametrize("profile", list(PROFILES))
def test_trls_vision_dpo_collator_takes_the_pairs(
    consumed: dict[str, tuple[RecordedRun, dict[str, Any]]], profile: str
) -> None:
    from tests.fakes.recorded_run import EDIT

    run, result = consumed[f"{profile}/preference"]
    assert result["pairs"] == 1
    images = sum(len(sizes) for sizes in result["image_sizes"])
    assert images == sent_images(run.requests[1]) >= 1  # the edited step's request, image for image
    # One row for chosen and one for rejected, each with the prompt's images expanded to image tokens.
    assert result["rows"] == 2 and result["pixel_values"][0] == 2 * images
    assert result["image_tokens"] == 2 * images * result["tokens_per_image"]
    assert all(n > 0 for n in result["completion_tokens"])
    end = "<|im_end|>\n"
    assert result["chosen"] == correction(run, list(EDIT)) + end
    assert result["rejected"] == run.replies[1] + end
