"""Each export format, read back the way its consumers read it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow.json as pajson
import pyarrow.parquet as pq
import pytest

from osw_studio.actions.coords import CoordinateSpace
from osw_studio.core.errors import ExportError
from osw_studio.trajectory.export import ExportSummary, export_runs
from osw_studio.trajectory.exporters import EXPORTERS
from osw_studio.trajectory.exporters.base import ExportOptions, RunFilter, parse_date
from osw_studio.trajectory.exporters.rescale import Rescaler
from osw_studio.trajectory.scrub import Scrubber
from tests.fakes.runs import SyntheticRun, write_run
from tests.trajectory.conftest import KEY_SHAPED, KNOWN_SECRET, RUNS, SECRETS


def export(runs_dir: Path, out: Path, fmt: str, **kwargs: Any) -> ExportSummary:
    kwargs.setdefault("scrubber", Scrubber(secrets=[KNOWN_SECRET]))
    return export_runs([runs_dir], fmt, out, ExportOptions(**kwargs))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def osworld_summary(
    result_dir: Path, action_space: str, observation_type: str, model: str
) -> dict[str, float]:
    """OSWorld's show_result.get_result, re-implemented: per-domain success rate in percent."""
    target_dir = os.path.join(result_dir, action_space, observation_type, model)
    domain_result: dict[str, list[float]] = {}
    for domain in os.listdir(target_dir):
        domain_path = os.path.join(target_dir, domain)
        if os.path.isdir(domain_path):
            for example_id in os.listdir(domain_path):
                example_path = os.path.join(domain_path, example_id)
                if os.path.isdir(example_path) and "result.txt" in os.listdir(example_path):
                    with open(os.path.join(example_path, "result.txt")) as f:  # OSWorld leaves it open
                        text = f.read()
                    try:
                        value = float(text)
                    except ValueError:
                        value = float(bool(text))
                    domain_result.setdefault(domain, []).append(value)
    return {d: sum(v) / len(v) * 100 for d, v in domain_result.items()}


def test_osworld_layout_gives_osworlds_per_domain_rates(runs_dir: Path, tmp_path: Path) -> None:
    summary = export(runs_dir, tmp_path, "osworld")
    assert summary.runs_exported == len(RUNS)
    rates = osworld_summary(tmp_path, "pyautogui", "screenshot", "test-model")
    assert rates == {"os": 50.0, "chrome": pytest.approx(200 / 3)}
    base = tmp_path / "pyautogui" / "screenshot" / "test-model"
    assert json.loads((base / "args.json").read_text())["action_space"] == "pyautogui"
    task = base / "os" / "os-ok"
    traj = lines(task / "traj.jsonl")
    keys = {"step_num", "action_timestamp", "action", "response", "reward", "done", "info", "screenshot_file"}
    assert all(set(line) == keys for line in traj)
    # Step 2 typed and saved: two actions, two lines, one step number.
    assert [line["step_num"] for line in traj] == [1, 2, 2, 3, 4, 5]
    assert traj[0]["action"] == "pyautogui.click(7, 5)"
    assert traj[1]["action"] == "pyautogui.write('hello world')"
    assert traj[-1]["action"] == "DONE" and traj[-1]["done"] and not traj[0]["done"]
    assert traj[3]["info"]["source"] == "human" and traj[1]["info"]["verdict"] == "edited"
    for line in traj:
        assert (task / line["screenshot_file"]).read_bytes()[:4] == b"\x89PNG"
    assert (task / "result.txt").read_text() == "1.0\n"
    # The interrupted run has its trajectory but no result, so OSWorld does not count it.
    cut = base / "gimp" / "gimp-cut"
    assert (cut / "traj.jsonl").is_file() and not (cut / "result.txt").exists()


def test_osworld_rerun_of_a_task_replaces_the_earlier_one(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs, SyntheticRun("same", score=0.0, started_at=1))
    write_run(runs, SyntheticRun("same", score=1.0, started_at=2))
    export_runs([runs], "osworld", tmp_path / "out")
    result = tmp_path / "out" / "pyautogui" / "screenshot" / "test-model" / "os" / "same" / "result.txt"
    assert {p.name for p in result.parent.iterdir() if p.suffix == ".jsonl"} == {"traj.jsonl"}
    assert float(result.read_text()) in (0.0, 1.0)
    assert len(lines(result.parent / "traj.jsonl")) == 4  # click, type + save, done


def test_osworld_reruns_are_counted_and_only_the_latest_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runs a later rerun replaces are counted as before, and none of their files is made."""
    from osw_studio.trajectory.exporters import copies

    runs = [tmp_path / f"runs{i}" for i in range(3)]  # in this order (ids made in one second may not sort)
    write_run(runs[0], SyntheticRun("same", score=0.0, steps=6, started_at=1))
    write_run(runs[1], SyntheticRun("same", score=0.0, steps=5, started_at=2))
    write_run(runs[2], SyntheticRun("same", score=1.0, steps=3, started_at=3))
    made: list[str] = []
    place = copies.place_file

    def recorded(src: Path, dest: str | Path) -> None:
        made.append(str(dest))
        place(src, dest)

    monkeypatch.setattr(copies, "place_file", recorded)
    summary = export_runs(runs, "osworld", tmp_path / "out")
    folder = tmp_path / "out" / "pyautogui" / "screenshot" / "test-model" / "os" / "same"
    assert float((folder / "result.txt").read_text()) == 1.0
    shots = sorted(str(p) for p in folder.glob("*.png"))
    assert len(shots) == 3 and sorted(made) == shots  # the latest run's screenshots, and no other copy
    assert len(lines(folder / "traj.jsonl")) == 4  # click, type + save, done
    assert summary.runs_exported == 3
    # Lines and steps of all three, as when each was written in turn.
    alone = [export_runs([r], "osworld", tmp_path / f"alone{i}") for i, r in enumerate(runs)]
    assert summary.samples == sum(a.samples for a in alone) > 3 * 4
    agent = sum(_card_count(tmp_path / f"alone{i}", "agent") for i in range(3))
    assert _card_count(tmp_path / "out", "agent") == agent == 6 + 5 + 3


def _card_count(out: Path, source: str) -> int:
    row = next(r for r in (out / "README.md").read_text().splitlines() if r.startswith(f"| {source} |"))
    return int(row.split("|")[2])


def test_osworld_rerun_found_damaged_leaves_the_run_before_it(tmp_path: Path) -> None:
    write_run(tmp_path / "runs0", SyntheticRun("same", score=0.0, steps=5, started_at=1))
    latest = write_run(tmp_path / "runs1", SyntheticRun("same", score=1.0, steps=3, started_at=2))
    steps = (latest / "steps.jsonl").read_text().splitlines()
    (latest / "steps.jsonl").write_text("\n".join(["{not json", *steps[1:]]) + "\n")
    summary = export_runs([tmp_path / "runs0", tmp_path / "runs1"], "osworld", tmp_path / "out")
    folder = tmp_path / "out" / "pyautogui" / "screenshot" / "test-model" / "os" / "same"
    assert len(summary.damaged) == 1 and summary.runs_exported == 1
    assert float((folder / "result.txt").read_text()) == 0.0
    assert len(lines(folder / "traj.jsonl")) == summary.samples
    export_runs([tmp_path / "runs0"], "osworld", tmp_path / "alone")
    alone = tmp_path / "alone" / folder.relative_to(tmp_path / "out")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == {
        p.name: p.read_bytes() for p in alone.iterdir()
    }
    assert len(list(folder.glob("*.png"))) == 5
    assert _card_count(tmp_path / "out", "agent") == 5


def _steps_with_actions() -> int:
    return sum(run.steps for run in RUNS)


@pytest.mark.parametrize("fmt", ["sft-messages", "sft-sharegpt"])
def test_sft_per_step_loads_with_datasets(
    runs_dir: Path, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import datasets

    summary = export(runs_dir, tmp_path / "out", fmt, history=3, images="copy")
    assert summary.samples == _steps_with_actions()
    ds = datasets.load_dataset(
        "json", data_files=str(tmp_path / "out" / "data.jsonl"), split="train", cache_dir=str(tmp_path / "c")
    )
    assert len(ds) == summary.samples
    row = next(r for r in ds if r["id"].endswith("/3") and r["task_id"] == "os-ok")
    if fmt == "sft-messages":
        roles = [m["role"] for m in row["messages"]]
        assert roles == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]
        images = [
            p["image_url"]["url"]
            for m in row["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
            if p["type"] == "image_url"
        ]
        target = row["messages"][-1]["content"]
    else:
        assert [c["from"] for c in row["conversations"]] == ["human", "gpt", "human", "gpt", "human", "gpt"]
        images = row["images"]
        assert sum(c["value"].count("<image>") for c in row["conversations"]) == len(images)
        target = row["conversations"][-1]["value"]
    # History of 3 screenshots: steps 1, 2 and the current step 3, each a real file beside the export.
    assert [Path(i).name for i in images] == ["step_0001.png", "step_0002.png", "step_0003.png"]
    assert all((tmp_path / "out" / i).read_bytes()[:4] == b"\x89PNG" for i in images)
    # Step 3 was a person's drag: the target is what ran, with a neutral thought, not a model's.
    assert target == (
        "I drag it there.\n```python\npyautogui.moveTo(1, 2)\npyautogui.dragTo(63, 39, duration=0.5)\n```"
    )


def test_sft_per_episode_and_action_only(runs_dir: Path, tmp_path: Path) -> None:
    export(runs_dir, tmp_path, "sft-messages", per="episode", target="action", history=2, images="copy")
    rows = lines(tmp_path / "data.jsonl")
    assert len(rows) == len(RUNS)
    row = next(r for r in rows if r["task_id"] == "os-ok")
    assistants = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for m in row["messages"]
        if m["role"] == "assistant"
    ]
    assert len(assistants) == 5 and not any("I should act" in a for a in assistants)
    images = [
        p
        for m in row["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    assert len(images) == 2  # only the last two screenshots are kept
    table = pajson.read_json(tmp_path / "data.jsonl")
    assert table.num_rows == len(RUNS)


@pytest.mark.parametrize(
    ("profile", "coords", "expected"),
    [
        ("osworld", None, "pyautogui.click(960, 540)"),
        (
            "opencua",
            None,
            "## Action:\nI click there.\n\n## Code:\n```python\npyautogui.click(x=966, y=546)\n```",
        ),
        ("opencua", "norm", "pyautogui.click(x=0.5, y=0.5)"),
        (
            "qwen3-vl",
            None,
            'on the screen.\n<tool_call>\n{"name": "computer_use", "arguments": '
            '{"action": "left_click", "coordinate": [500, 500]}}\n</tool_call>',
        ),
        ("uitars", None, "click(start_box='<|box_start|>(500,500)<|box_end|>')"),
        ("uitars-1.5", None, "click(start_box='<|box_start|>(966,546)<|box_end|>')"),
        ("osworld", "rel1000", "pyautogui.click(500, 500)"),
        ("computer13", None, '"x": 960, "y": 540'),
    ],
)
def test_target_profiles_write_the_right_coordinates(
    tmp_path: Path, profile: str, coords: str | None, expected: str
) -> None:
    run = SyntheticRun("centre", steps=2, screen=(1920, 1080), first_click=(960, 540))
    write_run(tmp_path / "runs", run)
    export_runs(
        [tmp_path / "runs"], "sft-messages", tmp_path / "out", ExportOptions(profile=profile, coords=coords)
    )
    first = lines(tmp_path / "out" / "data.jsonl")[0]
    assert first["step"] == 1
    assert expected in first["messages"][-1]["content"]
    point = CoordinateSpace(screen=(1920, 1080), mode="smart").from_screen(960, 540)
    assert point == (966, 546)


def test_train_size_rewrites_qwen3vl_and_opencua_replies_in_their_own_format() -> None:
    rescaler = Rescaler((966, 546))
    smart = CoordinateSpace(screen=(1920, 1080), mode="smart", rounding="trunc")
    opencua = (
        "## Thought:\nThe terminal.\n\n## Action:\nClick the terminal.\n\n## Code:\n"
        "```python\npyautogui.click(x=966, y=546)\n```"
    )
    # the same sections, the point in pixels of the half-size training image
    assert rescaler.reply(opencua, "opencua", smart) == opencua.replace("x=966, y=546", "x=483, y=273")
    call = '{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [%d, %d]}}'
    qwen = "Action: Click it.\n<tool_call>\n" + call % (960, 544) + "\n</tool_call>"
    sent = CoordinateSpace(screen=(1920, 1080), mode="resized", image=(1920, 1088), rounding="trunc")
    assert rescaler.reply(qwen, "qwen3vl", sent) == qwen.replace("[960, 544]", "[483, 273]")
    rel999 = CoordinateSpace(screen=(1920, 1080), mode="rel999", rounding="trunc")
    assert rescaler.reply(qwen, "qwen3vl", rel999) == qwen  # 999ths do not depend on the image size
    assert rescaler.unparsed == 0


def test_agentnet_one_line_per_run(runs_dir: Path, tmp_path: Path) -> None:
    export(runs_dir, tmp_path, "agentnet")
    rows = {r["task_id"]: r for r in lines(tmp_path / "data.jsonl")}
    assert set(rows) == {r.task_id for r in RUNS}
    row = rows["os-ok"]
    assert row["instruction"] == "Do task os-ok" and row["task_completed"] is True
    assert not rows["os-bad"]["task_completed"]
    assert [t["index"] for t in row["traj"]] == [0, 1, 2, 3, 4]
    first = row["traj"][0]
    assert first["value"]["code"] == "pyautogui.click(x=0.1094, y=0.125)"  # 7/64, 5/40: 0-1, keywords
    assert first["value"]["action"] == "Click at (7, 5)" and first["value"]["thought"].startswith("Step 1")
    assert row["traj"][-1]["value"]["code"] == "computer.terminate(status='success')"
    assert (tmp_path / first["image"]).is_file()


def test_preference_pairs_come_from_edits(runs_dir: Path, tmp_path: Path) -> None:
    summary = export(runs_dir, tmp_path, "preference")
    pairs = lines(tmp_path / "data.jsonl")
    assert summary.samples == len(pairs) == 2  # os-ok step 2, chrome-2 step 1
    pair = next(p for p in pairs if p["task_id"] == "os-ok")
    assert pair["step"] == 2
    assert pair["chosen"][0]["content"][0]["text"] == (
        "I type 'hello world', then press ctrl+s.\n"
        "```python\npyautogui.write('hello world')\npyautogui.hotkey('ctrl', 's')\n```"
    )
    assert pair["rejected"][0]["content"][0]["text"].startswith("Step 2: I should act")
    assert pair["prompt"][-1]["role"] == "user" and pair["prompt"][-1]["content"][0] == {"type": "image"}
    assert len(pair["images"]) == sum(p == {"type": "image"} for m in pair["prompt"] for p in m["content"])
    assert all((tmp_path / i).is_file() for i in pair["images"])
    first = next(p for p in pairs if p["task_id"] == "chrome-2")
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]


def test_rollouts_table_keeps_failures(runs_dir: Path, tmp_path: Path) -> None:
    export(runs_dir, tmp_path, "rollouts")
    table = pq.read_table(tmp_path / "rollouts.parquet")
    assert table.num_rows == len(RUNS)
    for name in ["run_id", "trajectory_id", "task_id", "group_id", "model_version", "instruction", "reward"]:
        assert name in table.column_names
    rows = {r["task_id"]: r for r in table.to_pylist()}
    assert rows["os-bad"]["reward"] == 0.0 and rows["os-ok"]["reward"] == 1.0
    assert rows["gimp-cut"]["status"] == "interrupted" and rows["gimp-cut"]["num_steps"] == 2
    assert rows["chrome-1"]["group_id"] == "chrome/chrome-1" and rows["os-ok"]["num_steps"] == 5
    messages = json.loads((tmp_path / rows["os-ok"]["messages"]).read_text())["messages"]
    # The model's own replies, as the policy wrote them.
    assert messages[2]["content"][0]["text"].startswith(
        "Step 1: I should act on the screen.\n```python\nclick"
    )


def test_parquet_embeds_images(runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export(runs_dir, tmp_path, "parquet")
    table = pq.read_table(tmp_path / "data.parquet")
    assert table.num_rows == _steps_with_actions()
    row = table.slice(0, 1).to_pylist()[0]
    assert row["image"]["bytes"][:4] == b"\x89PNG" and row["step"] == 1
    assert json.loads(row["actions"])[0]["kind"] in {"click", "scroll", "typing", "drag_to", "done"}
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets

    ds = datasets.load_dataset(
        "parquet", data_files=str(tmp_path / "data.parquet"), split="train", cache_dir=str(tmp_path / "c")
    )
    assert isinstance(ds.features["image"], datasets.Image) and len(ds) == table.num_rows


def test_html_report_draws_actions(runs_dir: Path, tmp_path: Path) -> None:
    export(runs_dir, tmp_path, "html")
    index = (tmp_path / "index.html").read_text()
    assert index.count("<tr><td><a href=") == len(RUNS)
    page = next(p for p in tmp_path.glob("*os-ok*.html")).read_text()
    assert page.count('class="step"') == 5 and page.count("data:image/png;base64,") == 5
    assert '<circle cx="7" cy="5"' in page  # the click of step 1 drawn where it landed
    assert "the model proposed" in page and "score <b>1</b>" in page
    cut = next(p for p in tmp_path.glob("*gimp-cut*.html")).read_text()
    assert "interrupted" in cut


def test_filters(runs_dir: Path, tmp_path: Path) -> None:
    def tasks(fmt: str = "agentnet", **f: Any) -> set[str]:
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        export(runs_dir, out, fmt, filter=RunFilter(**f))
        return {r["task_id"] for r in lines(out / "data.jsonl")}

    assert tasks(success_only=True) == {"os-ok", "chrome-1", "chrome-3"}
    assert tasks(min_score=0.5) == {"os-ok", "chrome-1", "chrome-3"}
    assert tasks(domains=frozenset({"os"})) == {"os-ok", "os-bad"}
    assert tasks(since=parse_date("2023-11-16"), until=parse_date("2023-11-17", end=True)) == {
        "os-bad",
        "chrome-1",
    }
    assert tasks(sources=frozenset({"human"})) == {"os-ok"}
    assert tasks(sources=frozenset({"edited"})) == {"os-ok", "chrome-2"}
    out = tmp_path / "steps"
    export(runs_dir, out, "sft-messages", filter=RunFilter(sources=frozenset({"edited", "human"})))
    assert sorted((r["task_id"], r["step"]) for r in lines(out / "data.jsonl")) == [
        ("chrome-2", 1),
        ("os-ok", 2),
        ("os-ok", 3),
    ]


def test_no_secret_in_any_output(runs_dir: Path, tmp_path: Path) -> None:
    # The store itself still holds what the writer could not know (a value it was not told about).
    raw = b"".join(p.read_bytes() for p in runs_dir.rglob("*.jsonl"))
    assert KNOWN_SECRET.encode() in raw and KEY_SHAPED.encode() in raw
    for fmt in EXPORTERS:
        out = tmp_path / fmt
        export(runs_dir, out, fmt, per="episode" if fmt == "sft-sharegpt" else "step", images="embed")
        for path in out.rglob("*"):
            if not path.is_file():
                continue
            data = path.read_bytes()
            texts = [data]
            if path.suffix == ".parquet":  # compressed: look at the values too
                table = pq.read_table(path)
                table = table.select([c for c in table.column_names if c != "image"])
                texts.append(json.dumps(table.to_pylist()).encode())
            for text in texts:
                for secret in SECRETS:
                    assert secret.encode() not in text, f"{secret} in {path}"
    assert "[REDACTED]" in (tmp_path / "sft-messages" / "data.jsonl").read_text()


def test_typed_text_scrubbing(runs_dir: Path, tmp_path: Path) -> None:
    scrubber = Scrubber(typed_patterns=[r"hello \w+"])
    export(runs_dir, tmp_path, "sft-messages", scrubber=scrubber)
    text = (tmp_path / "data.jsonl").read_text()
    assert "hello world" not in text and "pyautogui.write('[REDACTED]')" in text


def test_a_reviewers_correction_is_scrubbed_like_the_rest(runs_dir: Path) -> None:
    from osw_studio.core.actions import Typing
    from osw_studio.trajectory.exporters.base import ExportRun
    from osw_studio.trajectory.store import RunStore

    store = RunStore(next(p for p in runs_dir.iterdir() if "-os-bad-" in p.name))
    correction = [Typing(text=f"my key {KNOWN_SECRET}")]
    run = ExportRun(store, Scrubber(secrets=[KNOWN_SECRET]), corrections={1: correction})
    first = next(run.steps())
    assert first.verdict == "edited" and first.executed == [Typing(text="my key [REDACTED]")]
    # The steps are read once and walked as often as a format needs, with or without requests.
    assert [s.index for s in run.steps()] == [s.index for s in run.steps(requests=False)] == [1, 2, 3]


def test_bad_options_are_clear_errors(runs_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="unknown export format 'csv'"):
        export(runs_dir, tmp_path, "csv")
    with pytest.raises(ExportError, match="unknown profile"):
        export(runs_dir, tmp_path / "p", "sft-messages", profile="nope")
    with pytest.raises(ExportError, match="coordinate convention"):
        export(runs_dir, tmp_path / "c", "sft-messages", coords="inches")
    with pytest.raises(ExportError, match="not a date"):
        parse_date("yesterday")
