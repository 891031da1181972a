"""Exports of a recorded model-agent run: each sample is the request the model was sent, plus a target.

The run (tests/fakes/recorded_run.py) goes against the local OpenAI-compatible server, which keeps every
request it received; the exports are compared with those requests byte for byte.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from osw_studio.actions.coords import CoordinateSpace
from osw_studio.trajectory.export import export_options, export_runs
from osw_studio.trajectory.exporters.replies import write_reply
from osw_studio.trajectory.store import RunStore
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.recorded_run import EDIT, SCREEN, TAKEOVER, RecordedRun, record_run

pytestmark = pytest.mark.timeout(120)

PROFILES: dict[str, dict[str, Any]] = {
    # Screenshots sent as grabbed: the request's images are the stored screenshots themselves.
    "osworld": {},
    # Screenshots sent smaller, as JPEG: the bytes sent are kept beside the screenshots.
    "osworld-jpeg": {"screenshot_size": "1280x720", "image_format": "jpeg"},
    # UI-TARS 1.5: the smart-resized screen, coordinates in its pixels.
    "uitars": {"coordinate_mode": "smart"},
}


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module", params=list(PROFILES))
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> RecordedRun:
    name = request.param
    with FakeOpenAIServer(models=["test-model"]) as server:
        run = record_run(server, tmp_path_factory.mktemp(name), name.split("-")[0], **PROFILES[name])
        return asyncio.run(run)


def correction(run: RecordedRun, actions: list[Any]) -> str:
    """What a person's step must become: their actions in the model's own output format."""
    agent = RunStore(run.path).meta.agent
    if agent == "uitars":
        reply = write_reply("uitars", actions, CoordinateSpace(screen=SCREEN, mode="smart"))
    else:
        first_image = next(
            p["image_url"]["url"]
            for m in run.requests[0]["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
            if p["type"] == "image_url"
        )
        with Image.open(io.BytesIO(base64.b64decode(first_image.split(",", 1)[1]))) as image:
            size = image.size
        mode = "abs" if size == SCREEN else "resized"
        reply = write_reply("pyautogui", actions, CoordinateSpace(screen=SCREEN, mode=mode, image=size))
    assert reply is not None
    return reply


def test_the_store_keeps_each_request_once(recorded: RecordedRun) -> None:
    text = (recorded.path / "steps.jsonl").read_text()
    assert "base64" not in text  # images are references, not copies
    steps = list(RunStore(recorded.path).iter_steps())
    assert [(s.index, s.source, s.verdict, s.request is not None) for s in steps] == [
        (1, "agent", "approved", True),
        (2, "agent", "edited", True),
        (3, "human", "human", False),
        (4, "agent", "approved", True),
        (5, "agent", "approved", True),
    ]
    later = steps[3].request
    assert later is not None and later.messages[0] == {"same_as": [1, 0]}  # the system prompt, once
    sent = recorded.requests[0]
    assert later.params["temperature"] == sent["temperature"] == 0.25
    assert later.params["max_tokens"] == sent["max_tokens"] and later.params["model"] == "test-model"
    assert later.prompt_sha256 and later.prompt_source and "agent prompt" in later.prompt_source
    # The store is small: one step line is far below one screenshot's base64.
    assert len(text) < 40_000


def test_every_sft_messages_sample_is_the_request_plus_its_target(
    recorded: RecordedRun, tmp_path: Path
) -> None:
    summary = export_runs([recorded.path], "sft-messages", tmp_path, export_options())
    samples = {s["step"]: s for s in lines(tmp_path / "data.jsonl")}
    assert summary.samples == 5 and sorted(samples) == [1, 2, 3, 4, 5]
    by_step = {1: 0, 2: 1, 4: 2, 5: 3}  # the model was asked at these steps, in this order
    targets = {
        1: recorded.replies[0],
        2: correction(recorded, list(EDIT)),
        3: correction(recorded, list(TAKEOVER)),
        4: recorded.replies[2],
        5: recorded.replies[3],
    }
    for step, request_no in by_step.items():
        sample = samples[step]
        assert sample["prompt"] == "recorded"
        assert sample["messages"][:-1] == recorded.requests[request_no]["messages"], f"step {step}"
        assert sample["messages"][-1] == {"role": "assistant", "content": targets[step]}, f"step {step}"
    assert [samples[s]["source"] for s in sorted(samples)] == [
        "approved",
        "edited",
        "human",
        "approved",
        "approved",
    ]
    # The takeover step: the request before it, its corrected reply, and a turn showing this step's screen.
    human = samples[3]
    assert human["prompt"] == "derived"
    before = recorded.requests[1]["messages"]
    assert human["messages"][: len(before)] == before
    assert human["messages"][len(before)] == {"role": "assistant", "content": targets[2]}
    assert human["messages"][-1] == {"role": "assistant", "content": targets[3]}
    shown = human["messages"][-2]["content"]
    screen = (recorded.path / "screens" / "step_0003.png").read_bytes()
    assert {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(screen).decode()},
    } in shown
    # No boilerplate in any target: no replay notes, no empty code, no imitated special codes.
    for sample in samples.values():
        target = sample["messages"][-1]["content"]
        assert "replay step" not in target and "```python\n\n```" not in target and "time.sleep" not in target
    card = (tmp_path / "README.md").read_text()
    assert "| edited | 1 |" in card and "| human | 1 |" in card and "| approved | 3 |" in card
    assert "| recorded | 4 |" in card and "| derived | 1 |" in card


def test_reprompt_retargets_and_says_so(recorded: RecordedRun, tmp_path: Path) -> None:
    export_runs([recorded.path], "sft-messages", tmp_path, export_options(reprompt="uitars", images="copy"))
    samples = lines(tmp_path / "data.jsonl")
    assert {s["prompt"] for s in samples} == {"reprompt"}
    assert all(s["messages"][-1]["content"].startswith("Thought: ") for s in samples)
    # Laid out as UI-TARS agents send it: a plain system turn, the prompt, then the screenshot on its own.
    first = samples[0]["messages"]
    assert first[0] == {
        "role": "system",
        "content": [{"type": "text", "text": "You are a helpful assistant."}],
    }
    assert [p["type"] for p in first[1]["content"]] == ["text"] and "Write hello and save." in first[1][
        "content"
    ][0]["text"]
    assert [p["type"] for p in first[2]["content"]] == ["image_url"]
    assert "--reprompt uitars" in (tmp_path / "README.md").read_text()


def test_preference_pairs_are_in_trls_vision_layout(
    recorded: RecordedRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    export_runs([recorded.path], "preference", tmp_path, export_options())
    pairs = lines(tmp_path / "data.jsonl")
    assert len(pairs) == 1
    pair = pairs[0]
    assert pair["step"] == 2 and pair["source"] == "edited"
    assert pair["rejected"] == [
        {"role": "assistant", "content": [{"type": "text", "text": recorded.replies[1]}]}
    ]
    assert pair["chosen"] == [
        {"role": "assistant", "content": [{"type": "text", "text": correction(recorded, list(EDIT))}]}
    ]
    # TRL's vision DPO: one {"type": "image"} placeholder per entry of `images`, in order.
    placeholders = [p for m in pair["prompt"] for p in m["content"] if p["type"] == "image"]
    assert len(placeholders) == len(pair["images"]) >= 1
    sent = [
        p["image_url"]["url"]
        for m in recorded.requests[1]["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    assert [(tmp_path / i).read_bytes() for i in pair["images"]] == [
        base64.b64decode(u.split(",", 1)[1]) for u in sent
    ]
    texts = [
        p["text"] if isinstance(m["content"], list) else m["content"]
        for m in pair["prompt"]
        for p in m["content"]
        if p["type"] == "text"
    ]
    assert texts and all(isinstance(t, str) for t in texts)
    # It loads as a dataset with the columns TRL's preference trainers read.
    import datasets

    ds = datasets.load_dataset(
        "json", data_files=str(tmp_path / "data.jsonl"), split="train", cache_dir=str(tmp_path / "cache")
    )
    assert {"images", "prompt", "chosen", "rejected"} <= set(ds.column_names) and len(ds) == 1
    assert ds[0]["prompt"][-1]["role"] == "user" and ds[0]["chosen"][0]["role"] == "assistant"


def test_osworld_layout_uses_osworlds_action_space_names(recorded: RecordedRun, tmp_path: Path) -> None:
    from tests.trajectory.test_exporters import osworld_summary

    export_runs([recorded.path], "osworld", tmp_path, export_options())
    # UI-TARS runs included: OSWorld files every pyautogui-executing agent under `pyautogui`.
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == ["pyautogui"]
    assert osworld_summary(tmp_path, "pyautogui", "screenshot", "test-model") == {"os": 100.0}
    traj = lines(tmp_path / "pyautogui" / "screenshot" / "test-model" / "os" / "recorded" / "traj.jsonl")
    assert [t["action"] for t in traj][-1] == "DONE"
    assert traj[0]["response"] == recorded.replies[0]


def test_rollouts_have_darts_fields(recorded: RecordedRun, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    export_runs([recorded.path], "rollouts", tmp_path, export_options())
    row = pq.read_table(tmp_path / "rollouts.parquet").to_pylist()[0]
    assert row["trace_id"] == row["run_id"] and row["split_dir"] == row["run_id"] and row["num_chunks"] == 5
    final = json.loads((tmp_path / row["split_dir"] / "final_messages.json").read_text())
    last = recorded.requests[-1]["messages"]
    assert [m["role"] for m in final] == [*(m["role"] for m in last), "assistant"]
    assert final[-1] == {"role": "assistant", "content": recorded.replies[-1]}
    images = [
        p["image_url"]["url"]
        for m in final
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    sent = [
        p["image_url"]["url"]
        for m in last
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    assert [base64.b64encode((tmp_path / i).read_bytes()).decode() for i in images] == [
        u.split(",", 1)[1] for u in sent
    ]
    chunks = lines(tmp_path / row["split_dir"] / "chunks.jsonl")
    assert [c["step"] for c in chunks] == [1, 2, 3, 4, 5]


def llamafactory_accepts(
    dataset_dir: Path, row: dict[str, Any], columns: dict[str, str], tags: dict[str, str]
) -> bool:
    """The checks LLaMA-Factory makes of a sharegpt example: its converter keeps only conversations that
    alternate user (odd) and assistant (even) turns and end with the assistant; its multimodal plugin
    wants as many images as ``<image>`` tokens; images are read relative to the dataset folder."""
    turns = row[columns["messages"]]
    user, assistant = tags["user_tag"], tags["assistant_tag"]
    for n, turn in enumerate(turns):
        if turn[tags["role_tag"]] != (user if n % 2 == 0 else assistant):
            return False
    if len(turns) % 2:
        return False
    images = row[columns["images"]]
    tokens = sum(turn[tags["content_tag"]].count("<image>") for turn in turns)
    return tokens == len(images) and all((dataset_dir / i).is_file() for i in images)


def test_llamafactory_reads_the_sharegpt_export(recorded: RecordedRun, tmp_path: Path) -> None:
    summary = export_runs([recorded.path], "sft-sharegpt", tmp_path, export_options())
    info = json.loads((tmp_path / "dataset_info.json").read_text())
    entry = info["osw_studio"]
    assert entry["formatting"] == "sharegpt" and (tmp_path / entry["file_name"]).is_file()
    rows = lines(tmp_path / entry["file_name"])
    assert len(rows) == summary.samples == 5
    assert all(llamafactory_accepts(tmp_path, row, entry["columns"], entry["tags"]) for row in rows)
    # The images are the bytes the model was sent, in order.
    sent = [
        base64.b64decode(p["image_url"]["url"].split(",", 1)[1])
        for m in recorded.requests[0]["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    assert [(tmp_path / i).read_bytes() for i in rows[0]["images"]] == sent
    assert rows[0]["conversations"][-1] == {"from": "gpt", "value": recorded.replies[0]}
    assert "image_max_pixels" in (tmp_path / "README.md").read_text()


def test_train_size_scales_images_and_points_together(recorded: RecordedRun, tmp_path: Path) -> None:
    from osw_studio.actions import parse_reply

    size = (966, 546)
    export_runs([recorded.path], "sft-sharegpt", tmp_path, export_options(train_size="966x546"))
    plain = tmp_path / "plain"
    export_runs([recorded.path], "sft-sharegpt", plain, export_options())
    agent = RunStore(recorded.path).meta.agent
    fmt = "uitars" if agent == "uitars" else "pyautogui"
    steps = list(RunStore(recorded.path).iter_steps())
    mode = next(s.coordinate_mode for s in steps if s.coordinate_mode)
    first = next(
        p["image_url"]["url"]
        for m in recorded.requests[0]["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    )
    with Image.open(io.BytesIO(base64.b64decode(first.split(",", 1)[1]))) as image:
        sent_size = image.size
    run_space = CoordinateSpace(screen=SCREEN, mode=mode, image=None if fmt == "uitars" else sent_size)  # type: ignore[arg-type]
    train_space = CoordinateSpace(screen=SCREEN, mode="resized", image=size)
    for scaled, original in zip(lines(tmp_path / "data.jsonl"), lines(plain / "data.jsonl"), strict=True):
        for name in scaled["images"]:
            with Image.open(tmp_path / name) as image:
                assert image.size == size
        for a, b in zip(scaled["conversations"], original["conversations"], strict=True):
            if a["from"] != "gpt":
                continue
            got = parse_reply(a["value"], fmt, train_space)[1]
            want = parse_reply(b["value"], fmt, run_space)[1]
            assert [x.kind for x in got] == [x.kind for x in want]
            for x, y in zip(got, want, strict=True):
                if x.point and y.point:
                    assert abs(x.point[0] - y.point[0]) <= 2 and abs(x.point[1] - y.point[1]) <= 2
    assert "Scaled to the training size 966x546" in (tmp_path / "README.md").read_text()
