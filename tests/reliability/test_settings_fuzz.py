"""Settings fuzzed with hypothesis: any file gives settings or one SettingsError, never a traceback.

(The task loader and the action parsers have their fuzzing in ``tests/tasks`` and ``tests/actions``.)
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from osw_studio.core.errors import SettingsError
from osw_studio.settings import Settings, load_settings, save_settings
from osw_studio.settings.store import parse_settings
from tests.fakes.memory_keyring import MemoryKeyring
from tests.reliability.conftest import SEED, Budget

pytestmark = pytest.mark.timeout(300)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
TEXTS = st.sampled_from(
    [
        "http://127.0.0.1:8000/v1/",
        "https://api.example.com/v1/chat/completions",
        "ftp://x",
        "http://[::1",
        "",
        " ",
        "1920x1080",
        "0x0",
        "abs",
        "smart_resize",
        "uitars",
        "screenshot_a11y_tree",
        "sk-" + "a" * 40,
        "\x00",
        "é" * 3,
    ]
)
VALUES = JSON | TEXTS | st.integers(-5, 5) | st.lists(st.integers(-1, 4000), max_size=3)

SECTIONS: dict[str, list[str]] = {
    "model_provider": ["base_url", "api_key", "model", "timeout", "max_retries"],
    "evaluation": ["task_suite", "max_steps", "screen_resolution", "action_space", "save_screenshots"],
    "agent": ["observation_type", "history_window", "temperature", "max_tokens", "top_p"],
}
PROFILE_KEYS = [
    "base_url", "model", "agent", "coordinate_mode", "action_space", "observation_type", "timeout",
    "api_key", "api_key_env", "screenshot_size", "image_format", "logprobs", "max_tokens",
]  # fmt: skip


@st.composite
def settings_data(draw: st.DrawFn) -> Any:
    """Mostly the real shape with wild values in it (to reach every validator), sometimes any JSON."""
    if draw(st.integers(0, 4)) == 0:
        return draw(JSON)
    data: dict[str, Any] = {}
    for section, keys in SECTIONS.items():
        if draw(st.booleans()):
            data[section] = draw(st.dictionaries(st.sampled_from(keys), VALUES, max_size=len(keys)))
    if draw(st.booleans()):
        names = st.sampled_from(["default", "tars", "a b", "", "x" * 70, "ok-1"])
        profile = st.dictionaries(st.sampled_from(PROFILE_KEYS), VALUES, max_size=5)
        data["profiles"] = draw(st.dictionaries(names, profile | JSON, max_size=3))
    if draw(st.booleans()):
        data["active_profile"] = draw(st.sampled_from(["default", "tars", "missing"]) | JSON)
    return data


def _without_keys(data: Any) -> Any:
    """``data`` with every ``api_key`` entry removed."""
    if isinstance(data, dict):
        return {k: _without_keys(v) for k, v in data.items() if k != "api_key"}
    if isinstance(data, list):
        return [_without_keys(v) for v in data]
    return data


def examples(budget: Budget) -> int:
    return budget.pick(200, 2000)


def test_any_settings_data_parses_or_is_one_settings_error(budget: Budget) -> None:
    @seed(SEED)
    @settings(max_examples=examples(budget), deadline=None, database=None)
    @given(data=settings_data())
    def check(data: Any) -> None:
        try:
            parsed = parse_settings(data, source="settings.json")
        except SettingsError as exc:
            assert str(exc).startswith("settings.json"), str(exc)
            return
        for name in parsed.profile_names:
            try:
                profile = parsed.resolve_profile(name)
            except SettingsError:
                continue
            assert profile.base_url.startswith(("http://", "https://"))

    check()


def test_any_file_loads_or_is_one_settings_error(budget: Budget) -> None:
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "settings.json"

        @seed(SEED)
        @settings(max_examples=examples(budget), deadline=None, database=None)
        @given(raw=st.binary(max_size=200) | settings_data().map(lambda d: json.dumps(d).encode()))
        def check(raw: bytes) -> None:
            file.write_bytes(raw)
            try:
                load_settings(file)
            except SettingsError as exc:
                assert str(file) in str(exc), str(exc)

        check()


def test_whatever_loads_saves_without_keys_and_loads_back_the_same(
    budget: Budget, memory_keyring: MemoryKeyring
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "settings.json"

        @seed(SEED)
        @settings(
            max_examples=examples(budget),
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        @given(data=settings_data())
        def check(data: Any) -> None:
            try:
                loaded = parse_settings(data)
            except SettingsError:
                return
            save_settings(loaded, file)
            text = file.read_text()
            saved = json.loads(text)
            assert "api_key" not in saved.get("model_provider", {})
            assert not any("api_key" in p for p in saved.get("profiles", {}).values() if isinstance(p, dict))
            # The key string may also be the value of another field (a task suite named like a key):
            # only a copy that came from an api_key field is a leak.
            secret = "sk-" + "a" * 40
            if secret in text:
                assert secret in json.dumps(_without_keys(data)), "an API key was written to the file"
            again = load_settings(file)
            assert again.model_dump(mode="json") == Settings.model_validate(json.loads(text)).model_dump(
                mode="json"
            )
            assert again.model_dump(
                mode="json", exclude={"model_provider": {"api_key"}}
            ) == loaded.model_dump(mode="json", exclude={"model_provider": {"api_key"}})

        check()
