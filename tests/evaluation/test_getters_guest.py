"""Getters against a real guest server (`python -m osw_studio.guest` on Xvfb), then scored end to end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from osw_studio.core.errors import EvaluationError
from osw_studio.core.task import Evaluator
from osw_studio.envs.guest_client import GuestClient
from osw_studio.evaluation.evaluate import score_evaluator
from osw_studio.evaluation.getters.files import FileMissing
from osw_studio.evaluation.registry import GETTERS, GetterContext
from tests.fakes.desktop import Desktop

pytestmark = pytest.mark.xvfb


@pytest.fixture
async def ctx(desktop: Desktop, tmp_path: Path) -> AsyncIterator[GetterContext]:
    async with GuestClient(desktop.url, desktop.token) as guest:
        yield GetterContext(guest=guest, cache_dir=tmp_path / "cache" / "t1", task_dir=tmp_path)


def read(path: object) -> str:
    return Path(str(path)).read_text()


async def get(ctx: GetterContext, spec: dict[str, object]) -> object:
    kind = str(spec.pop("type"))
    return await GETTERS.get(kind)(ctx, spec)


async def test_vm_file_copies_a_guest_file_into_the_cache(ctx: GetterContext, desktop: Desktop) -> None:
    (desktop.home / "report.txt").write_text("total 42\n")
    path = await get(ctx, {"type": "vm_file", "path": str(desktop.home / "report.txt"), "dest": "report.txt"})
    assert path == str(ctx.cache_dir / "report.txt")
    assert read(path) == "total 42\n"
    with pytest.raises(FileMissing):
        await get(ctx, {"type": "vm_file", "path": str(desktop.home / "absent.txt"), "dest": "a.txt"})


async def test_vm_file_multi_gives_the_listed_files(ctx: GetterContext, desktop: Desktop) -> None:
    (desktop.home / "a.csv").write_text("a\n")
    (desktop.home / "b.csv").write_text("b\n")
    spec = {
        "type": "vm_file",
        "multi": True,
        "gives": [0, 1],
        "path": [str(desktop.home / "a.csv"), str(desktop.home / "b.csv"), str(desktop.home / "none")],
        "dest": ["a.csv", "b.csv", "none"],
    }
    assert await get(ctx, spec) == [str(ctx.cache_dir / "a.csv"), str(ctx.cache_dir / "b.csv")]


async def test_command_getters(ctx: GetterContext) -> None:
    out = await get(ctx, {"type": "vm_command_line", "command": "echo hello; echo oops >&2", "shell": True})
    assert out == "hello\n"
    err = await get(ctx, {"type": "vm_command_error", "command": ["sh", "-c", "echo oops >&2"]})
    assert err == "oops\n"


async def test_list_directory_and_screen_size(ctx: GetterContext, desktop: Desktop) -> None:
    folder = desktop.home / "photos"
    folder.mkdir(exist_ok=True)
    (folder / "cat.jpg").write_bytes(b"x")
    tree = await get(ctx, {"type": "list_directory", "path": str(folder)})
    assert isinstance(tree, dict) and tree["name"] == "photos"
    assert [c["name"] for c in tree["children"]] == ["cat.jpg"]
    assert await get(ctx, {"type": "vm_screen_size"}) == {"width": 1920, "height": 1080}


async def test_accessibility_tree_is_xml_or_a_clear_error(ctx: GetterContext) -> None:
    try:
        tree = await get(ctx, {"type": "accessibility_tree"})
    except EvaluationError as exc:
        assert "AT-SPI" in str(exc)
    else:
        assert isinstance(tree, str) and tree.lstrip().startswith("<")


async def test_cloud_file_from_a_local_path_and_cache_file(ctx: GetterContext, tmp_path: Path) -> None:
    (tmp_path / "gold.txt").write_text("gold\n")
    path = await get(ctx, {"type": "cloud_file", "path": "gold.txt", "dest": "gold_copy.txt"})
    assert read(path) == "gold\n"
    (ctx.cache_dir / "diff.out").write_text("")
    assert await get(ctx, {"type": "cache_file", "path": "diff.out"}) == str(ctx.cache_dir / "diff.out")


async def test_a_task_evaluator_scored_against_the_guest(ctx: GetterContext, desktop: Desktop) -> None:
    (desktop.home / "notes.txt").write_text("alpha\nbeta\n")
    (ctx.task_dir or Path()).joinpath("notes_gold.txt").write_text("alpha\nbeta\n")
    evaluator = Evaluator.model_validate(
        {
            "func": ["compare_text_file", "check_include_exclude"],
            "conj": "and",
            "result": [
                {"type": "vm_file", "path": str(desktop.home / "notes.txt"), "dest": "notes.txt"},
                {"type": "vm_command_line", "command": ["ls", str(desktop.home)]},
            ],
            "expected": [
                {"type": "cloud_file", "path": "notes_gold.txt", "dest": "notes_gold.txt"},
                {"type": "rule", "rules": {"include": ["notes.txt"], "exclude": ["secret"]}},
            ],
        }
    )
    result = await score_evaluator(ctx, "t1", evaluator)
    assert result.score == 1.0, result
    (desktop.home / "notes.txt").write_text("alpha\n")
    (ctx.cache_dir / "notes.txt").unlink()
    assert (await score_evaluator(ctx, "t1", evaluator)).score == 0.0
