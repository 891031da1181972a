"""``run`` and ``eval run`` on a remote guest that wants a token: the keyring's, else ``OSW_GUEST_TOKEN``.

The guest is a small scripted OSWorld-style server on 127.0.0.1 that answers 401 to any request
without the right bearer token, as our guest server does.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image

from osw_studio.cli import main
from osw_studio.settings.secrets import set_guest_token
from tests.envs.fake_guest import FakeGuest, Reply, Request, osworld_guest
from tests.fakes.memory_keyring import MemoryKeyring
from tests.runner.conftest import TASKS

pytestmark = pytest.mark.timeout(120)

TOKEN = "guest-token-b81f0c5d27"
HELLO = TASKS / "os" / "write-hello-file.json"


def _png(size: tuple[int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "navy").save(buffer, "PNG")
    return buffer.getvalue()


def _guarded(reply: Callable[[Request], Reply]) -> Callable[[Request], Reply]:
    def answer(request: Request) -> Reply:
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return 401, "application/json", b'{"detail": "missing or wrong token"}'
        return reply(request)

    return answer


@pytest.fixture
def guest() -> Iterator[tuple[FakeGuest, str]]:
    """An OSWorld-style guest that refuses requests without ``TOKEN``; its URL."""
    fake = osworld_guest((1280, 800))
    png = _png((1280, 800))
    fake.route("GET", "/screenshot", lambda r: (200, "image/png", png))
    for key, reply in list(fake.routes.items()):
        fake.routes[key] = _guarded(reply)
    url = fake.start()
    try:
        yield fake, url
    finally:
        fake.stop()


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "os").symlink_to(TASKS / "os")
    index = suite / "one.json"
    index.write_text(json.dumps({"os": ["write-hello-file"]}), encoding="utf-8")
    return index


def _command(kind: str, tmp_path: Path, url: str) -> list[str]:
    tmp_path.mkdir(exist_ok=True)
    config = tmp_path / "settings.json"
    config.write_text("{}", encoding="utf-8")
    out = str(tmp_path / "out")
    if kind == "run":
        return [
            "--config",
            str(config),
            "run",
            str(HELLO),
            "--agent",
            "replay",
            "--out",
            out,
            "--provider",
            "remote",
            url,
        ]
    suite = str(_suite(tmp_path))
    return [
        "--config",
        str(config),
        "eval",
        "run",
        suite,
        "--agent",
        "replay",
        "--out",
        out,
        "--provider",
        "remote",
        url,
    ]


def _written(folder: Path) -> str:
    return "".join(
        p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and p.suffix != ".png"
    )


@pytest.mark.parametrize("kind", ["run", "eval"])
def test_the_token_comes_from_the_keyring_and_is_in_no_stored_file(
    kind: str,
    tmp_path: Path,
    guest: tuple[FakeGuest, str],
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake, url = guest
    monkeypatch.delenv("OSW_GUEST_TOKEN", raising=False)  # the variable would come first
    set_guest_token(url, TOKEN)
    code = main(_command(kind, tmp_path, url))
    out = capsys.readouterr()
    # no refusal for a missing or wrong token (a bare "401" could be part of pytest's tmp path)
    assert "HTTP 401" not in out.out + out.err and "wrong token" not in out.out + out.err, out.err
    # the fake guest runs nothing, so the task is scored 0: run says so with 1, eval run scored it (0)
    assert code == (1 if kind == "run" else 0), out.err
    assert fake.calls("/screenshot") and all(
        r.headers["authorization"] == f"Bearer {TOKEN}" for r in fake.requests
    )
    assert TOKEN not in _written(tmp_path / "out") + out.out + out.err


@pytest.mark.parametrize("kind", ["run", "eval"])
def test_osw_guest_token_is_the_fallback_and_without_any_the_refusal_says_what_to_do(
    kind: str,
    tmp_path: Path,
    guest: tuple[FakeGuest, str],
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake, url = guest
    monkeypatch.setenv("OSW_GUEST_TOKEN", TOKEN)
    assert main(_command(kind, tmp_path / "with", url)) == (1 if kind == "run" else 0)
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in fake.requests)
    capsys.readouterr()

    monkeypatch.delenv("OSW_GUEST_TOKEN")
    code = main(_command(kind, tmp_path / "without", url))
    out = capsys.readouterr()
    assert code in (1, 2) and "missing or wrong token (HTTP 401)" in out.out + out.err
    assert "osw-studio keys set --guest URL" in out.out + out.err
