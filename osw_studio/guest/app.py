"""The guest server's ASGI app: OSWorld's routes, our extensions, token auth on all of them."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from osw_studio import __version__
from osw_studio.guest import commands_api, desktop_api, extensions_api, files_api
from osw_studio.guest.auth import TokenAuth
from osw_studio.guest.context import GuestContext
from osw_studio.guest.guard import HostPolicy, RequestGuard


def json_safe(value: Any) -> Any:
    """``value`` with NaN and infinities as strings, so a 422 can quote them in JSON.

    Examples:
        >>> json_safe({"input": [float("nan"), 1e300, float("-inf")]})
        {'input': ['nan', 1e+300, '-inf']}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


async def _invalid(_request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422 answer, also for a request that holds NaN or an infinity (JSON has neither)."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    return JSONResponse({"detail": json_safe(jsonable_encoder(errors))}, status_code=422)


def create_app(context: GuestContext, token: str | None, *, hosts: HostPolicy | None = None) -> Any:
    """The guest server app for ``context``; every route needs ``token`` unless it is None.

    Every request first passes :class:`~osw_studio.guest.guard.RequestGuard` (``Host`` names from
    ``hosts``, loopback names and IP addresses when None; no cross-site requests; bounded bodies).

    Returns:
        An ASGI app (FastAPI, wrapped in the token check when there is a token, and in the guard).
    """

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        context.close()

    app = FastAPI(
        title="OSW Studio guest server",
        version=__version__,
        description="OSWorld's guest API (the shapes of OSWorld's desktop_env server) plus OSW Studio's "
        "extensions: /capabilities, /input (core actions through XTest), /stream (live MJPEG), "
        "screenshot format options. Every route needs `Authorization: Bearer <token>` (or `?token=`); "
        "requests naming a foreign Host (421), cross-site requests (403) and oversized bodies (413) "
        "are refused.",
        lifespan=lifespan,
    )
    app.state.guest = context
    app.add_exception_handler(RequestValidationError, _invalid)
    for router in (desktop_api.router, commands_api.router, files_api.router, extensions_api.router):
        app.include_router(router)
    guarded = TokenAuth(app, token) if token is not None else app
    return RequestGuard(guarded, hosts or HostPolicy("127.0.0.1"))
