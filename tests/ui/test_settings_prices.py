"""Settings: the model's price per million tokens is typed in the dialog, saved and shown again."""

from __future__ import annotations

import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from osw_studio.settings import load_settings
from tests.fakes.memory_keyring import MemoryKeyring
from tests.ui.test_settings_dialog import _dialog


def test_a_price_is_saved_per_model_and_an_empty_one_is_unknown(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"model_provider": {"model": "gpt-4o"}}), encoding="utf-8")
    dialog = _dialog(qtbot, load_settings(path))
    assert [dialog.prices[p].text() for p in ("input", "cached_input", "output")] == ["", "", ""]
    dialog.prices["input"].setText("2.5")
    dialog.prices["output"].setText("10")
    dialog.save()
    assert dialog.error.text() == ""
    assert json.loads(path.read_text(encoding="utf-8"))["prices"] == {
        "gpt-4o": {"input": 2.5, "output": 10.0}
    }
    settings = load_settings(path)
    assert (
        settings.resolve_profile().price is not None and settings.resolve_profile().price.cached_input is None
    )

    again = _dialog(qtbot, settings)
    assert [again.prices[p].text() for p in ("input", "cached_input", "output")] == ["2.5", "", "10"]
    again.prices["cached_input"].setText("a lot")
    again.save()
    assert "cached input price 'a lot' is not a number" in again.error.text()
    for field in again.prices.values():
        field.clear()
    again.save()
    assert json.loads(path.read_text(encoding="utf-8")).get("prices", {}) == {}
