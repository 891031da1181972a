"""The guest server's ASGI app: OSWorld's routes, our extensions, token auth on all of them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from osw_studio import __version__
from osw_studio.guest import commands_api, desktop_api, extensions_api, files_api
from osw_studio.guest.auth import TokenAuth
from osw_studio.guest.context import GuestContext


def create_app(context: GuestContext, token: str | None) -> Any:
    """The guest server app for ``context``; every route needs ``token`` unless it is None.

    Returns:
        An ASGI app (FastAPI, wrapped in the token check when there is a token).
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
        "screenshot format options. Every route needs `Authorization: Bearer <token>` (or `?token=`).",
        lifespan=lifespan,
    )
    app.state.guest = context
    for router in (desktop_api.router, commands_api.router, files_api.router, extensions_api.router):
        app.include_router(router)
    return TokenAuth(app, token) if token is not None else app
