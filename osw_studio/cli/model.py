"""``osw-studio check-model``: send a tiny request to a profile's endpoint and explain any failure.

Exit codes (one per kind of failure, so scripts can tell them apart):

====  ==========================================================
0     the model answered
2     a settings problem (invalid file, unknown profile)
3     401: the key is missing or wrong
4     403: the key may not use this endpoint or model
5     404: nothing at the base URL (a working variant is suggested)
6     the endpoint does not serve the model (its models are listed)
7     no answer within the timeout
8     TLS handshake failed
9     connection refused, unknown host, or another network error
10    rate limited (429)
11    the endpoint failed (5xx)
12    the endpoint answered something else that is unusable
====  ==========================================================
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from osw_studio.core.exit_codes import MEANINGS, ExitCode

EXIT_CODES: dict[str, int] = {
    "auth": ExitCode.KEY_REJECTED,
    "forbidden": ExitCode.FORBIDDEN,
    "not_found": ExitCode.WRONG_BASE_URL,
    "unknown_model": ExitCode.UNKNOWN_MODEL,
    "timeout": ExitCode.TIMEOUT,
    "tls": ExitCode.TLS,
    "refused": ExitCode.NETWORK,
    "dns": ExitCode.NETWORK,
    "connection": ExitCode.NETWORK,
    "rate_limited": ExitCode.RATE_LIMITED,
    "server": ExitCode.SERVER_ERROR,
}
OTHER_FAILURE = ExitCode.OTHER_ANSWER

_EPILOG = "exit codes:\n" + "\n".join(
    f"  {int(code)} {MEANINGS[code].removeprefix('`check-model`: ')}"
    for code in ExitCode
    if code is not ExitCode.FAILED
)


def register(subparsers: Any) -> None:
    """Add ``check-model``."""
    check = subparsers.add_parser(
        "check-model",
        help="send a tiny request to a profile's model and explain any failure",
        description="Send a tiny request to the model of a profile and say what is wrong if it fails: the "
        "key (401, 403), the base URL (404, trying it with and without /v1), the model name (listing the "
        "endpoint's models), a timeout, TLS, or a refused connection.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("--profile", help="profile name (default: the active profile, or 'default')")
    check.add_argument(
        "--timeout", type=float, metavar="S", help="seconds to wait (default: min(timeout, 30))"
    )
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    import asyncio

    from osw_studio.agent.check import check_model
    from osw_studio.settings import load_settings
    from osw_studio.settings.secrets import find_api_key

    settings = load_settings(args.config)
    for notice in settings.notices:
        print(f"note: {notice}", file=sys.stderr)
    profile = settings.resolve_profile(args.profile)
    lookup = find_api_key(profile)
    source = lookup.key.source if lookup.key else None
    print(f"checking profile {profile.name!r}: model {profile.model!r} at {profile.base_url}")
    print(
        f"key: {source or 'none'}"
        + (f" (keyring unavailable: {lookup.keyring_error})" if lookup.keyring_error else "")
    )
    result = asyncio.run(check_model(profile, api_key=lookup.value, key_source=source, wait_s=args.timeout))
    if result.ok:
        latency = f"{result.latency:.2f} s" if result.latency is not None else "?"
        print(f"OK: {profile.model} answered in {latency}: {result.reply!r}")
        return ExitCode.OK
    print(f"FAILED: {result.message}", file=sys.stderr)
    if result.hint:
        print(f"  fix: {result.hint}", file=sys.stderr)
    if result.reason == "auth" and not lookup.key:
        from osw_studio.settings.secrets import alternatives

        print(f"  no key was found: {alternatives(lookup.keyring_error)}", file=sys.stderr)
    return EXIT_CODES.get(result.reason or "", OTHER_FAILURE)
