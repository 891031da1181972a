"""Every exit code of ``osw-studio``, in one table: the commands return these, the README prints the table.

A command that ran and found something wrong (a run not solved, a task that fails its check, a bad
key) exits 1; an error a person can fix, printed as one line, exits 2; ``check-model`` names what is
wrong with an endpoint by its own code (3 to 12), so a script can tell a bad key from a bad URL.

Examples:
    >>> int(ExitCode.ERROR), ExitCode.for_outcome(failed=True).name
    (2, 'FAILED')
    >>> print(markdown_table().splitlines()[2])
    | 0 | `OK` | success: the command did what it was asked (a run solved its task) |
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What ``osw-studio`` exits with."""

    OK = 0
    FAILED = 1
    ERROR = 2
    KEY_REJECTED = 3
    FORBIDDEN = 4
    WRONG_BASE_URL = 5
    UNKNOWN_MODEL = 6
    TIMEOUT = 7
    TLS = 8
    NETWORK = 9
    RATE_LIMITED = 10
    SERVER_ERROR = 11
    OTHER_ANSWER = 12
    INTERRUPTED = 130

    @classmethod
    def for_outcome(cls, *, failed: bool) -> ExitCode:
        """:attr:`FAILED` when the command found something wrong, else :attr:`OK`."""
        return cls.FAILED if failed else cls.OK


MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "success: the command did what it was asked (a run solved its task)",
    ExitCode.FAILED: "the command ran and found something wrong: a run not solved or stopped, a task or "
    "asset that fails its check, a key not stored",
    ExitCode.ERROR: "an error to fix first (bad settings, a task file, a guest or model that cannot be "
    "used): one line on stderr says what and where",
    ExitCode.KEY_REJECTED: "`check-model`: the key was rejected (401)",
    ExitCode.FORBIDDEN: "`check-model`: the key may not use this model or endpoint (403)",
    ExitCode.WRONG_BASE_URL: "`check-model`: wrong base URL (404)",
    ExitCode.UNKNOWN_MODEL: "`check-model`: the endpoint does not serve this model",
    ExitCode.TIMEOUT: "`check-model`: no answer in time",
    ExitCode.TLS: "`check-model`: TLS failed (certificate or protocol)",
    ExitCode.NETWORK: "`check-model`: connection refused, name not found or network down",
    ExitCode.RATE_LIMITED: "`check-model`: rate limited (429)",
    ExitCode.SERVER_ERROR: "`check-model`: the server failed (5xx)",
    ExitCode.OTHER_ANSWER: "`check-model`: any other unusable answer",
    ExitCode.INTERRUPTED: "interrupted (Ctrl+C); a run still writes its result",
}
"""What each code means, as the README's table says it."""


def markdown_table() -> str:
    """The README's table of exit codes."""
    rows = [f"| {int(code)} | `{code.name}` | {MEANINGS[code]} |" for code in ExitCode]
    return "\n".join(["| code | name | meaning |", "|---|---|---|", *rows])
