"""What an export's output folder already holds: another export (named by its card), other files, nothing.

An export writes its files by name into its folder, so one written into a folder that holds another
export mixes formats and replaces that export's card and data; the export dialog asks first.
"""

from __future__ import annotations

from pathlib import Path

from osw_studio.trajectory.exporters.card import CARD

CARD_TITLE = "# OSW Studio export: "
"""How an export's card begins (the format's name follows)."""


def held_export(out: Path) -> str | None:
    """What ``out`` holds that an export into it would mix with, in words; None when it is empty or absent.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     folder = Path(d)
    ...     empty = held_export(folder)
    ...     _ = (folder / "notes.txt").write_text("mine")
    ...     files = held_export(folder)
    ...     _ = (folder / "README.md").write_text(CARD_TITLE + "html")
    ...     export = held_export(folder)
    >>> empty, files, export
    (None, '1 file or folder', 'an export (html)')
    """
    if not out.is_dir():
        return None
    entries = list(out.iterdir())
    if not entries:
        return None
    card = out / CARD
    if card.is_file():
        try:
            with card.open(encoding="utf-8", errors="replace") as f:
                first = f.readline().strip()
        except OSError:
            first = ""
        if first.startswith(CARD_TITLE):
            return f"an export ({first.removeprefix(CARD_TITLE).strip() or 'unknown format'})"
    return f"{len(entries)} file or folder" if len(entries) == 1 else f"{len(entries)} files or folders"


def count_task_folders(out: Path) -> int:
    """The task folders of OSWorld's results layout under ``out`` (those holding a ``traj.jsonl``)."""
    return sum(1 for _ in out.glob("*/*/*/*/*/traj.jsonl"))
