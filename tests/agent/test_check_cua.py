"""``osw-studio check-model`` for a GPT-5.4 profile: probed through the Responses API with its tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from tests.fakes.memory_keyring import MemoryKeyring
from tests.fakes.responses_server import FakeResponsesServer

pytestmark = pytest.mark.timeout(30)


def check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base_url: str, **profile: object
) -> tuple[int, str, str]:
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({
        "profiles": {"g": {"preset": "gpt-5.4", "base_url": base_url, "max_retries": 0, **profile}},
        "active_profile": "g",
    }))  # fmt: skip
    code = main(["--config", str(config), "check-model"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, memory_keyring: MemoryKeyring) -> None:
    for name in ("OSW_STUDIO_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OSW_STUDIO_API_KEY", "right")


def test_ok_probes_the_responses_api_with_the_computer_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeResponsesServer(api_key="right") as server:
        code, out, _ = check(tmp_path, capsys, server.base_url)
        [probe] = server.response_requests
    assert code == 0, out
    assert "OK: gpt-5.4 answered in" in out
    assert probe.json["tools"] == [{"type": "computer"}] and probe.path.endswith("/v1/responses")


def test_a_wrong_key_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_STUDIO_API_KEY", "wrong")
    with FakeResponsesServer(api_key="right") as server:
        code, _, err = check(tmp_path, capsys, server.base_url)
    assert code == 3 and "rejected the API key (401)" in err and "/responses" in err


def test_a_base_url_without_v1_gets_the_v1_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeResponsesServer(api_key="right") as server:
        base = server.base_url
        code, _, err = check(tmp_path, capsys, base.removesuffix("/v1"))
    assert code == 5 and f"the API answers at {base}: set base_url to it" in err


def test_an_unknown_model_lists_the_served_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeResponsesServer(api_key="right") as server:
        code, _, err = check(tmp_path, capsys, server.base_url, model="gpt-9")
    assert code == 6 and "does not serve model 'gpt-9'" in err
    assert "the endpoint serves: computer-use-preview, gpt-5.4" in err


def test_a_model_without_the_tool_says_which_tool_it_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeResponsesServer(api_key="right", tools=("computer_use_preview", "function")) as server:
        code, _, err = check(tmp_path, capsys, server.base_url)
    assert code == 12
    assert "Invalid value: 'computer'" in err and "tools[0].type" in err
    assert "pick the preset that matches the model" in err


def test_computer_use_preview_is_probed_with_its_own_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeResponsesServer(api_key="right", tools=("computer_use_preview",)) as server:
        code, out, _ = check(tmp_path, capsys, server.base_url, preset="computer-use-preview")
        [probe] = server.response_requests
    assert code == 0, out
    assert probe.json["tools"][0]["type"] == "computer_use_preview" and probe.json["truncation"] == "auto"
