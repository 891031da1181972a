"""The guest server's ready line: what the guest writes, every launcher reads back."""

from __future__ import annotations

import pytest

from osw_studio.envs.ready import ReadyLine, parse_ready
from osw_studio.guest.serve import ready_line


@pytest.mark.parametrize(("token", "announced"), [("Tok-en_123", "Tok-en_123"), (None, None)])
def test_the_line_the_guest_prints_parses_back(token: str | None, announced: str | None) -> None:
    line = ready_line("127.0.0.1", 43210, token)
    logs = f"Openbox-Message: Unable to find a valid menu file\n{line}\nINFO: more output\n"
    expected = ReadyLine("http://127.0.0.1:43210", 43210, announced)
    assert parse_ready(line + "\n") == expected
    assert parse_ready(logs) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "osw-studio guest ready on http://127.0.0.1:43210 token=abc",  # caught mid-write: no line end yet
        "osw-studio guest ready on http://127.0.0.1 token=abc\n",  # no port
        "osw-studio guest ready on http://127.0.0.1:43210\n",  # no token
        "osw-studio guest ready on http://127.0.0.1:99999 token=abc\n",  # no such port
        "uvicorn running on http://127.0.0.1:43210 token=abc\n",  # someone else's line
    ],
)
def test_an_incomplete_or_foreign_line_is_not_ready(text: str) -> None:
    assert parse_ready(text) is None
