"""Image copies made in worker processes give the export that copies made in line give."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from osw_studio.core.errors import ExportError
from osw_studio.trajectory.export import export_runs
from osw_studio.trajectory.exporters.base import ExportOptions
from osw_studio.trajectory.exporters.copies import FileCopier, place_file
from tests.fakes.runs import SyntheticRun, write_run


def every_file(folder: Path) -> dict[str, bytes]:
    """The export's files and their bytes (the dataset card aside: it says when it was written).

    The export folder's own path (OSWorld's ``args.json`` names it) reads as ``OUT``.
    """
    return {
        p.relative_to(folder).as_posix(): p.read_bytes().replace(str(folder).encode(), b"OUT")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "README.md"
    }


@pytest.mark.parametrize("fmt", ["osworld", "sft-messages", "sft-sharegpt", "agentnet", "rollouts"])
def test_copies_in_worker_processes_give_the_same_export(runs_dir: Path, tmp_path: Path, fmt: str) -> None:
    # A rerun of a task with fewer steps: OSWorld's layout replaces the earlier run's folder, and none
    # of the earlier run's screenshots may land in it afterwards (a long run leaves copies on their way).
    reruns = tmp_path / "reruns"
    steps = 400 if fmt == "osworld" else 12
    write_run(reruns, SyntheticRun("long", score=0.0, steps=steps, started_at=1_800_000_000))
    write_run(reruns, SyntheticRun("long", score=1.0, steps=2, started_at=1_800_000_001))
    exports = {}
    for workers in (0, 2):
        out = tmp_path / f"workers-{workers}"
        export_runs([runs_dir, reruns], fmt, out, ExportOptions(images="copy", copy_workers=workers))
        exports[workers] = every_file(out)
    assert sum(name.endswith(".png") for name in exports[0]) >= 10
    assert exports[2] == exports[0]


def test_a_failed_copy_on_a_worker_is_raised_by_wait_and_by_the_next_copy(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"a")
    with FileCopier(workers=2) as copier:
        copier.copy(tmp_path / "missing.png", tmp_path / "x.png")
        with pytest.raises(FileNotFoundError):
            copier.wait()
        with pytest.raises(FileNotFoundError):
            copier.copy(tmp_path / "a.png", tmp_path / "y.png")
    assert not (tmp_path / "y.png").exists()
    with pytest.raises(FileNotFoundError):  # in line, as before: at once
        FileCopier().copy(tmp_path / "missing.png", tmp_path / "z.png")


def test_a_failed_copy_fails_the_export(runs_dir: Path, tmp_path: Path) -> None:
    """The export does not report success with an image missing (the copy's error is the export's)."""
    out = tmp_path / "out"
    blocker = out / "images"
    blocker.parent.mkdir()
    blocker.write_text("a file where the images folder goes")
    with pytest.raises(ExportError, match="cannot write the export: Not a directory"):
        export_runs([runs_dir], "sft-sharegpt", out, ExportOptions(images="copy", copy_workers=2))


@pytest.mark.parametrize("sendfile", [True, False])
def test_place_file_copies_the_bytes_with_or_without_sendfile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sendfile: bool
) -> None:
    data = os.urandom(3 << 20) + b"tail"  # more than one read of the fallback
    (tmp_path / "a.png").write_bytes(data)
    if not sendfile:

        def unsupported(*args: object) -> int:
            raise OSError(errno.EINVAL, "not between these files")

        monkeypatch.setattr(os, "sendfile", unsupported)
    place_file(tmp_path / "a.png", tmp_path / "b.png")
    assert (tmp_path / "b.png").read_bytes() == data
    assert (tmp_path / "b.png").stat().st_mode & 0o777 == 0o644 & ~_umask()
    (tmp_path / "c.png").write_bytes(b"other")
    place_file(tmp_path / "c.png", tmp_path / "b.png")  # an existing file is kept
    assert (tmp_path / "b.png").read_bytes() == data


def test_place_file_from_a_missing_file_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        place_file(tmp_path / "missing.png", tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_worker_copies_paths_of_any_bytes_and_many_at_once(tmp_path: Path) -> None:
    """Paths go to a worker as NUL-ended bytes: newlines, spaces and non-UTF-8 names arrive whole."""
    src = tmp_path / "source"
    src.mkdir()
    names = ["plain.png", "with space.png", "new\nline.png", os.fsdecode(b"latin-\xe9.png")]
    for name in names:
        (src / name).write_bytes(name.encode("utf-8", "surrogateescape") * 1000)
    out = tmp_path / "out"
    out.mkdir()
    with FileCopier(workers=2) as copier:
        for i in range(3000):  # more than a pipe holds: the writes block until the workers catch up
            name = names[i % len(names)]
            copier.copy(src / name, out / f"{i}-{name}")
        copier.wait()
    made = sorted(out.iterdir())
    assert len(made) == 3000
    for path in made:
        assert path.read_bytes() == (src / path.name.split("-", 1)[1]).read_bytes()


def test_a_worker_that_dies_fails_the_export_with_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"a")
    with FileCopier(workers=1) as copier:
        copier.copy(tmp_path / "a.png", tmp_path / "b.png")
        copier.wait()
        for proc in copier._procs:
            proc.kill()
            proc.wait()
        with pytest.raises(OSError, match="copying process ended early"):
            for i in range(10_000):  # the pipe's buffer takes the first writes
                copier.copy(tmp_path / "a.png", tmp_path / f"c{i}.png")
            copier.wait()
