"""``osw-studio check-model`` against a real local server: OK, and one explanation per failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.cli.model import EXIT_CODES
from osw_studio.envs.local import free_port
from tests.fakes.memory_keyring import MemoryKeyring
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.timeout(30)


def check(tmp_path: Path, capsys: pytest.CaptureFixture[str], **provider: object) -> tuple[int, str, str]:
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"model_provider": {"max_retries": 0, **provider}}))
    code = main(["--config", str(config), "check-model"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, memory_keyring: MemoryKeyring) -> None:
    for name in ("OSW_STUDIO_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_ok_against_the_local_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], openai_server: FakeOpenAIServer
) -> None:
    code, out, _ = check(tmp_path, capsys, base_url=openai_server.base_url, model="test-model")
    assert code == 0
    assert "OK: test-model answered in" in out and "'OK'" in out
    probe = openai_server.chat_requests[0].json
    assert probe["max_tokens"] == 8 and not probe.get("stream")


def test_a_base_url_without_v1_gets_the_v1_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], openai_server: FakeOpenAIServer
) -> None:
    code, _, err = check(tmp_path, capsys, base_url=openai_server.root_url, model="test-model")
    assert code == EXIT_CODES["not_found"] == 5
    assert "nothing answers at this URL (404)" in err
    assert f"the API answers at {openai_server.base_url}: set base_url to it" in err


def test_a_base_url_with_a_needless_v1_gets_the_suggestion_without_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(prefix="") as server:
        code, _, err = check(tmp_path, capsys, base_url=server.root_url + "/v1", model="test-model")
    assert code == 5 and f"the API answers at {server.root_url}: set base_url to it" in err


def test_an_unknown_model_lists_the_served_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer(models=["ui-tars-1.5-7b", "qwen2.5-vl-7b"]) as server:
        code, _, err = check(tmp_path, capsys, base_url=server.base_url, model="ui-tars")
    assert code == 6
    assert "does not serve model 'ui-tars'" in err
    assert "the endpoint serves: qwen2.5-vl-7b, ui-tars-1.5-7b" in err


def test_a_wrong_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with FakeOpenAIServer(api_key="sk-right") as server:
        code, out, err = check(tmp_path, capsys, base_url=server.base_url, model="test-model")
    assert code == 3 and "key: $OPENAI_API_KEY" in out
    assert "rejected the API key (401)" in err and "sk-wrong" not in out + err


def test_no_key_at_all_names_the_ways_to_give_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer(api_key="sk-right") as server:
        code, out, err = check(tmp_path, capsys, base_url=server.base_url, model="test-model")
    assert code == 3 and "key: none" in out
    assert "no key was found" in err and "OSW_STUDIO_API_KEY" in err


@pytest.mark.parametrize(
    ("reply", "code", "text"),
    [
        (Reply.error(403, "not allowed"), 4, "(403): not allowed"),
        (Reply.error(429, "quota", headers={"Retry-After": "30"}), 10, "it asks to wait 30 s"),
        (Reply.error(500, "boom"), 11, "the endpoint failed (500): boom"),
        (Reply(invalid_json=True), 12, "invalid JSON"),
    ],
)
def test_each_failure_has_its_exit_code(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    openai_server: FakeOpenAIServer,
    reply: Reply,
    code: int,
    text: str,
) -> None:
    openai_server.queue(reply)
    got, _, err = check(tmp_path, capsys, base_url=openai_server.base_url, model="test-model")
    assert got == code and text in err


def test_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str], openai_server: FakeOpenAIServer) -> None:
    openai_server.queue(Reply(delay=10))
    config = tmp_path / "s.json"
    config.write_text(
        json.dumps({"model_provider": {"base_url": openai_server.base_url, "model": "test-model"}})
    )
    assert main(["--config", str(config), "check-model", "--timeout", "0.3"]) == 7
    assert "no answer within 0.3 s" in capsys.readouterr().err


def test_connection_refused_and_tls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], openai_server: FakeOpenAIServer
) -> None:
    port = free_port()  # free, so nothing listens there
    code, _, err = check(tmp_path, capsys, base_url=f"http://127.0.0.1:{port}/v1", model="m")
    assert code == 9 and "connection refused" in err
    https = openai_server.base_url.replace("http://", "https://")
    code, _, err = check(tmp_path, capsys, base_url=https, model="test-model")
    assert code == 8 and "TLS handshake" in err and "use http://" in err


def test_an_unknown_profile_is_a_settings_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "s.json"
    config.write_text("{}")
    assert main(["--config", str(config), "check-model", "--profile", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no profile named 'nope'" in err and "Traceback" not in err
