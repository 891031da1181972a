"""The export dialog's review and selection filters: the same curation as `osw-studio export`."""

from __future__ import annotations

import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Click
from osw_studio.core.review import ReviewEvent
from osw_studio.trajectory.review import ReviewLog
from osw_studio.ui.export_dialog import ExportDialog
from tests.fakes.runs import SyntheticRun, write_run


async def test_the_dialog_exports_accepted_runs_without_wrong_steps_and_with_corrections(
    qtbot: QtBot, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    accepted = write_run(runs, SyntheticRun("t1", steps=4))
    write_run(runs, SyntheticRun("t2", steps=4))
    log = ReviewLog(accepted)
    log.append(ReviewEvent(reviewer="ann", verdict="accepted"))
    log.append(ReviewEvent(reviewer="ann", step=2, label="wrong", correction=[Click(x=5, y=6)]))
    log.append(ReviewEvent(reviewer="ann", step=3, label="wrong"))
    dialog = ExportDialog([], runs)
    qtbot.addWidget(dialog)
    dialog.format.setCurrentText("sft-messages")
    dialog.review.setCurrentText("accepted")
    dialog.drop_wrong.setChecked(True)
    out = tmp_path / "sft"
    dialog.out.setText(str(out))
    dialog.start()
    summary = await dialog.wait()
    assert summary is not None, dialog.message.text()
    rows = [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]
    assert {row["run_id"] for row in rows} == {accepted.name}
    assert sorted(row["step"] for row in rows) == [1, 4]
    card = (out / "README.md").read_text()
    assert "review: accepted runs" in card and "steps labelled wrong dropped" in card

    dialog.drop_wrong.setChecked(False)
    dialog.apply_corrections.setChecked(True)
    dialog.out.setText(str(tmp_path / "corrected"))
    dialog.start()
    assert await dialog.wait() is not None, dialog.message.text()
    rows = [json.loads(line) for line in (tmp_path / "corrected" / "data.jsonl").read_text().splitlines()]
    step2 = next(row for row in rows if row["step"] == 2)
    assert "(5, 6)" in step2["messages"][-1]["content"] or "5, 6" in json.dumps(step2["messages"][-1])
