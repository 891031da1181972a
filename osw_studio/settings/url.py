"""Base URLs of OpenAI-compatible endpoints: normalisation and the ``/v1`` variants worth trying.

People paste base URLs in every shape: with a trailing slash, with ``/v1`` twice (a gateway URL plus
a copied suffix), or the full ``/chat/completions`` endpoint. The openai SDK appends
``/chat/completions`` itself, so the base URL must end right before it.

Examples:
    >>> normalize_base_url(" http://127.0.0.1:8000/v1/ ")
    'http://127.0.0.1:8000/v1'
    >>> normalize_base_url("http://localhost:8000/v1/v1")
    'http://localhost:8000/v1'
    >>> normalize_base_url("https://API.example.com/v1/chat/completions")
    'https://api.example.com/v1'
    >>> url_variants("http://127.0.0.1:8000")
    ['http://127.0.0.1:8000/v1']
    >>> url_variants("http://127.0.0.1:8000/api/v1")
    ['http://127.0.0.1:8000/api', 'http://127.0.0.1:8000/v1', 'http://127.0.0.1:8000']
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from osw_studio.core.errors import SettingsError

_ENDPOINT_SUFFIXES = ("/chat/completions", "/completions", "/models", "/responses")


def normalize_base_url(url: str, *, where: str | None = None) -> str:
    """Return ``url`` as a clean base URL: no trailing slash, no repeated ``/v1``, no endpoint suffix.

    Args:
        url: What the user typed.
        where: Where the URL came from, for the error message (a file and JSON path).

    Raises:
        SettingsError: If ``url`` is not an ``http`` or ``https`` URL with a host.
    """
    text = url.strip()
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise SettingsError(
            f"base URL {text!r} is not an http(s) URL",
            where=where,
            hint="write it like http://127.0.0.1:8000/v1 or https://api.openai.com/v1",
        )
    path = re.sub(r"/{2,}", "/", parts.path).rstrip("/")
    for suffix in _ENDPOINT_SUFFIXES:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    # "/v1/v1" comes from appending /v1 to a URL that already had it; one is meant.
    while path.endswith("/v1/v1"):
        path = path[: -len("/v1")]
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def url_variants(url: str) -> list[str]:
    """Other base URLs to try when ``url`` answers 404: with and without ``/v1``, and the bare host.

    The result never contains ``url`` itself nor a doubled ``/v1``; it is ordered by how likely each
    is what the user meant.
    """
    base = normalize_base_url(url)
    parts = urlsplit(base)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    path = parts.path
    candidates = [origin + path[: -len("/v1")]] if path.endswith("/v1") else [origin + path + "/v1"]
    candidates += [origin + "/v1", origin]
    out: list[str] = []
    for candidate in candidates:
        if candidate != base and candidate not in out:
            out.append(candidate)
    return out
