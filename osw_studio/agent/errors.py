"""The one error a model call raises: a :class:`ModelError` that also says which kind of failure it was.

``reason`` lets the CLI map failures to exit codes and the UI pick a fix to offer, without parsing text.
"""

from __future__ import annotations

import email.utils
import json
import ssl
import time
from collections.abc import Mapping
from typing import Any, Literal

from osw_studio.core.errors import ModelError

Reason = Literal[
    "auth",  # 401: missing or wrong key
    "forbidden",  # 403
    "not_found",  # 404 on the path: the base URL is wrong
    "unknown_model",  # 404 naming the model
    "bad_request",  # 400/422: the endpoint refused the request (context too long, no image support...)
    "rate_limited",  # 429, after the retries
    "server",  # 5xx
    "http",  # any other status
    "timeout",
    "tls",
    "refused",
    "dns",
    "connection",
    "cut",  # the stream ended before the reply did
    "invalid_reply",  # not JSON, or JSON without a reply in it
    "too_large",  # the request is over the size cap
    "unsupported_tool",  # 400 naming the tool, its version or its beta header: the model does not take it
]


class ModelCallError(ModelError):
    """A model call failed; ``reason`` says how and ``status`` is the HTTP status when there was one."""

    def __init__(
        self,
        message: str,
        *,
        reason: Reason,
        status: int | None = None,
        where: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, where=where, hint=hint)
        self.reason: Reason = reason
        self.status = status


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds a server asks to wait, from ``retry-after-ms`` or ``retry-after`` (seconds or a date).

    >>> parse_retry_after({"retry-after": "2"})
    2.0
    >>> parse_retry_after({"retry-after-ms": "250"})
    0.25
    >>> parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0)
    10.0
    >>> parse_retry_after({}) is None
    True
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class CutStream(Exception):
    """A stream ended without a finish reason."""


class InvalidReply(Exception):
    """The reply parsed as JSON but holds no usable answer."""


def translate_error(
    exc: BaseException,
    *,
    url: str,
    model: str,
    timeout: float,
    max_retries: int = 0,
    profile: str | None = None,
    has_key: bool = True,
) -> ModelCallError:
    """Turn whatever the openai SDK (or the network under it) raised into one readable error."""
    import openai
    import pydantic

    of_profile = f" of profile {profile!r}" if profile else ""
    if isinstance(exc, CutStream):
        return ModelCallError(
            "the reply stream was cut short",
            reason="cut",
            where=url,
            hint="the server dropped the "
            "connection mid-reply; check its logs (out of memory, restart) and try again",
        )
    if isinstance(exc, InvalidReply | json.JSONDecodeError | pydantic.ValidationError):
        return ModelCallError(
            f"the endpoint answered with invalid JSON ({_first_line(exc)})",
            reason="invalid_reply",
            where=url,
            hint="check that the base URL points at an OpenAI-compatible API, not a web page or proxy",
        )
    if isinstance(exc, openai.APIResponseValidationError):
        return ModelCallError(
            f"the endpoint's reply does not look like the OpenAI API ({_first_line(exc)})",
            reason="invalid_reply",
            where=url,
        )
    if isinstance(exc, openai.APITimeoutError):
        return ModelCallError(
            f"no answer within {timeout:g} s",
            reason="timeout",
            where=url,
            hint="the server may be overloaded or the model still loading; raise model_provider.timeout "
            "if replies are just slow",
        )
    if isinstance(exc, openai.APIConnectionError):
        return _connection_error(exc, url)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _server_message(exc)
        if status == 401:
            hint = (
                "no API key was sent; store one with `osw-studio keys set --profile "
                f"{profile or 'NAME'}` or set OSW_STUDIO_API_KEY"
                if not has_key
                else f"check the key{of_profile} (`osw-studio keys set`); it may be wrong, expired or for "
                "another provider"
            )
            return ModelCallError(
                f"the endpoint rejected the API key (401): {message}",
                reason="auth",
                status=401,
                where=url,
                hint=hint,
            )
        if status == 403:
            return ModelCallError(
                f"the key may not use this endpoint or model (403): {message}",
                reason="forbidden",
                status=403,
                where=url,
                hint="check the key's permissions, the model name and the account's region or plan",
            )
        if status == 404:
            if _mentions_model(exc, model):
                return ModelCallError(
                    f"the endpoint does not serve model {model!r}: {message}",
                    reason="unknown_model",
                    status=404,
                    where=url,
                    hint="`osw-studio check-model` lists the models it serves",
                )
            return ModelCallError(
                f"nothing answers at this URL (404): {message}",
                reason="not_found",
                status=404,
                where=url,
                hint="check the base URL, with or without /v1 (`osw-studio check-model` tries both)",
            )
        if status == 429:
            wait = parse_retry_after(dict(exc.response.headers))
            after = f"; it asks to wait {wait:g} s" if wait is not None else ""
            return ModelCallError(
                f"rate limited (429) after {max_retries} retries{after}: {message}",
                reason="rate_limited",
                status=429,
                where=url,
                hint="wait, lower the number of parallel runs, or raise model_provider.max_retries",
            )
        if status == 413:
            return ModelCallError(
                f"the request is too large for the endpoint (413): {message}",
                reason="too_large",
                status=413,
                where=url,
                hint="send smaller screenshots (screenshot_size, image_format jpeg) or fewer history images",
            )
        if status in (400, 422):
            return ModelCallError(
                f"the endpoint refused the request ({status}): {message}",
                reason="bad_request",
                status=status,
                where=url,
                hint="the prompt may be over the context length, or the model may not accept images",
            )
        if status >= 500:
            return ModelCallError(
                f"the endpoint failed ({status}): {message}",
                reason="server",
                status=status,
                where=url,
                hint="a server-side problem; check the server's logs, or try again later",
            )
        return ModelCallError(f"HTTP {status}: {message}", reason="http", status=status, where=url)
    return ModelCallError(f"the model call failed: {_first_line(exc)}", reason="connection", where=url)


_TOOL_WORDS = (
    "tools[",
    "tools.",
    "tool type",
    "computer_use",
    "computer-use",
    "beta",
    "tool_choice",
    "not supported with",
)


def unsupported_tool(error: ModelCallError) -> ModelCallError | None:
    """A refusal of the request's tool (its type, version or beta header) as ``unsupported_tool``, else None.

    Computer-use models take one tool version each (GPT-5.4 ``computer``, ``computer-use-preview``
    ``computer_use_preview``, Claude ``computer_20251124`` with its beta header), and a 400 naming the
    tool is the sign that the model and the tool do not match.

    >>> e = ModelCallError("the endpoint refused the request (400): Invalid value: 'computer'. "
    ...                    "Supported values are: 'function' and 'computer_use_preview' in tools[0].type",
    ...                    reason="bad_request", status=400)
    >>> unsupported_tool(e).reason
    'unsupported_tool'
    """
    if error.reason != "bad_request":
        return None
    text = error.message.lower()
    if not any(word in text for word in _TOOL_WORDS):
        return None
    return ModelCallError(
        error.message,
        reason="unsupported_tool",
        status=error.status,
        where=error.where,
        hint="the model does not take this computer-use tool: GPT-5.4 takes the `computer` tool, "
        "computer-use-preview `computer_use_preview`, Claude `computer_20251124` with the beta "
        "`computer-use-2025-11-24`; pick the preset that matches the model",
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        for key in ("message", "detail", "error"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value[:300]
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return str(value["message"])[:300]
    response = getattr(exc, "response", None)
    if response is not None:
        text = str(response.text).strip()
        if text and not text.lstrip().startswith("<"):
            return text.splitlines()[0][:300]
        return f"{response.reason_phrase or 'no message'}"
    return _first_line(exc)


def _mentions_model(exc: Any, model: str) -> bool:
    body = getattr(exc, "body", None)
    code = body.get("code") if isinstance(body, dict) else None
    if code == "model_not_found":
        return True
    text = _server_message(exc).lower()
    return "model" in text and ("not exist" in text or "not found" in text or model.lower() in text)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 20:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _connection_error(exc: BaseException, url: str) -> ModelCallError:
    import socket
    from urllib.parse import urlsplit

    chain = _chain(exc)
    host = urlsplit(url).netloc
    texts = " | ".join(str(e) for e in chain)
    if any(isinstance(e, ssl.SSLError) for e in chain) or "SSL" in texts or "CERTIFICATE" in texts:
        detail = next((str(e) for e in chain if isinstance(e, ssl.SSLError)), texts)
        plain_http = "WRONG_VERSION_NUMBER" in texts or "wrong version number" in texts
        hint = (
            "the server speaks plain HTTP; use http:// in the base URL"
            if plain_http
            else "the server's certificate is not trusted; set SSL_CERT_FILE to its CA bundle, or use "
            "http:// for a local server"
        )
        return ModelCallError(
            f"TLS handshake with {host} failed: {detail[:200]}", reason="tls", where=url, hint=hint
        )
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return ModelCallError(
            f"connection refused by {host}",
            reason="refused",
            where=url,
            hint="is the server running, and on this port? (vLLM and SGLang print the port they listen on)",
        )
    if any(isinstance(e, socket.gaierror) for e in chain):
        return ModelCallError(
            f"cannot resolve the host name {urlsplit(url).hostname!r}",
            reason="dns",
            where=url,
            hint="check the spelling of the base URL and the network",
        )
    if "incomplete" in texts or "peer closed" in texts:
        return ModelCallError(
            "the connection closed before the reply was complete",
            reason="cut",
            where=url,
            hint="the server dropped the connection mid-reply; check its logs and try again",
        )
    return ModelCallError(f"cannot reach {host}: {_first_line(chain[-1])}", reason="connection", where=url)
