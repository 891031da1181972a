"""``osw-studio check-model`` for a Claude profile: probed through the Messages API with its tool and beta."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.test_check_cua import check as check_profile
from tests.fakes import messages_server
from tests.fakes.memory_keyring import MemoryKeyring
from tests.fakes.messages_server import FakeMessagesServer

pytestmark = pytest.mark.timeout(30)

MODEL = "claude-sonnet-4-5-20250929"


def check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base_url: str, **profile: object
) -> tuple[int, str, str]:
    """``check-model`` of a claude-sonnet-4.5 profile asking ``base_url``."""
    return check_profile(tmp_path, capsys, base_url, **{"preset": "claude-sonnet-4.5", **profile})


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, memory_keyring: MemoryKeyring) -> None:
    for name in ("OSW_STUDIO_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "right")


def test_ok_probes_the_messages_api_with_the_computer_tool_and_its_beta(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeMessagesServer(api_key="right", models=(MODEL,)) as server:
        code, out, _ = check(tmp_path, capsys, server.base_url)
        [probe] = server.message_requests
    assert code == 0, out
    assert f"OK: {MODEL} answered in" in out
    assert probe.json["tools"][0]["type"] == "computer_20251124"
    headers = {k.lower(): v for k, v in probe.headers.items()}
    assert headers["anthropic-beta"] == "computer-use-2025-11-24"
    assert "right" in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer "))
    assert probe.path.endswith("/v1/messages")


def test_a_wrong_key_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong")
    with FakeMessagesServer(api_key="right", models=(MODEL,)) as server:
        code, _, err = check(tmp_path, capsys, server.base_url)
    assert code != 0 and "rejected the API key (401)" in err and "/v1/messages" in err


def test_an_unknown_model_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeMessagesServer(api_key="right", models=(MODEL,)) as server:
        code, _, err = check(tmp_path, capsys, server.base_url, model="claude-sonnet-9")
    assert code != 0 and "does not serve model 'claude-sonnet-9'" in err


def test_a_base_url_with_v1_is_told_to_drop_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeMessagesServer(api_key="right", models=(MODEL,)) as server:
        root = server.base_url
        code, _, err = check(tmp_path, capsys, root + "/v1")
    assert code != 0 and f"set base_url to {root}" in err


@pytest.mark.parametrize(
    ("betas", "said"),
    [
        ({"computer_20251124": "computer-use-2099-01-01"}, "requires the beta header"),
        ({}, "Input tag 'computer_20251124'"),
    ],
    ids=["beta-header", "tool-version"],
)
def test_a_refused_beta_or_tool_version_is_an_unsupported_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    betas: dict[str, str], said: str,
) -> None:  # fmt: skip
    monkeypatch.setattr(messages_server, "TOOL_BETAS", betas)
    with FakeMessagesServer(api_key="right", models=(MODEL,)) as server:
        code, _, err = check(tmp_path, capsys, server.base_url)
    assert code != 0 and said in err
    assert "computer_20251124" in err and "computer-use-2025-11-24" in err  # the hint names the pair
