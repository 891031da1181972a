"""Token auth for every route: ``Authorization: Bearer <token>``, or ``?token=`` for viewers of the stream.

A plain ASGI middleware, so it also guards ``/openapi.json`` and ``/docs`` and costs no extra task per
request.
"""

from __future__ import annotations

import hmac
import json
from typing import Any
from urllib.parse import parse_qs

Scope = dict[str, Any]
ASGIApp = Any

_BODY = json.dumps({"detail": "missing or wrong token"}).encode()


def token_from(scope: Scope) -> str | None:
    """The token a request carries, from its Authorization header or its ``token`` query parameter.

    Examples:
        >>> token_from({"headers": [(b"authorization", b"Bearer abc")], "query_string": b""})
        'abc'
        >>> token_from({"headers": [], "query_string": b"fps=5&token=xyz"})
        'xyz'
        >>> token_from({"headers": [], "query_string": b""}) is None
        True
    """
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer":
                return str(credentials.strip())
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    values = query.get("token")
    return values[0] if values else None


class TokenAuth:
    """Answers 401 to any HTTP request without the right token.

    Args:
        app: The ASGI app to guard.
        token: The token every request must carry.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Check the token of HTTP requests, then pass everything on."""
        if scope["type"] == "http":
            given = token_from(scope)
            if given is None or not hmac.compare_digest(given.encode(), self._token):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(_BODY)).encode()),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": _BODY})
                return
        await self.app(scope, receive, send)
