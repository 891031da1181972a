"""VLC getters: what it plays, from its HTTP interface, and the guest's default video player.

VLC's HTTP interface (``vlc --extraintf http --http-password password``, port 8080 as in OSWorld's
images) answers ``/requests/status.xml``; the endpoint is :attr:`GetterContext.vlc_url`, by default the
guest's host on port 8080, with OSWorld's password ``password``.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import httpx

from osw_studio.core import limits
from osw_studio.core.bounded_http import bound_responses
from osw_studio.evaluation.registry import GetterContext, getter

log = logging.getLogger(__name__)

VLC_PORT = 8080
"""OSWorld's ``vlc_port``: where the guest's VLC serves its HTTP interface."""

VLC_PASSWORD = "password"
"""The HTTP interface's password in OSWorld's images (the user name is empty)."""

VIDEO_TYPES = (
    "3gp", "3gpp", "3gpp2", "avi", "divx", "dv", "fli", "flv", "mp2t", "mp4", "mp4v-es", "mpeg",
    "mpeg-system", "msvideo", "ogg", "quicktime", "vnd.divx", "vnd.mpegurl", "vnd.rn-realvideo", "webm",
    "x-anim", "x-avi", "x-flc", "x-fli", "x-flv", "x-m4v", "x-matroska", "x-mpeg", "x-mpeg-system",
    "x-mpeg2", "x-ms-asf", "x-ms-asf-plugin", "x-ms-asx", "x-ms-wm", "x-ms-wmv", "x-ms-wmx", "x-ms-wvx",
    "x-msvideo", "x-nsv", "x-ogm", "x-ogm+ogg", "x-theora", "x-theora+ogg",
)  # fmt: skip
"""The ``video/*`` MIME types whose default application decides the default video player."""


async def vlc_url(ctx: GetterContext) -> str:
    """The guest VLC's HTTP interface (port 8080 of the guest, unless the context names one)."""
    return await ctx.service_url(VLC_PORT, ctx.vlc_url)


@getter("vlc_playing_info")
async def get_vlc_playing_info(ctx: GetterContext, spec: dict[str, Any]) -> str | None:
    """VLC's ``status.xml`` saved as ``dest``, or None when VLC does not answer it."""
    url = f"{await vlc_url(ctx)}/requests/status.xml"
    try:
        http = bound_responses(httpx.AsyncClient(timeout=30), limits.GUEST_JSON_BYTES, "VLC's status")
        async with http:
            response = await http.get(url, auth=("", VLC_PASSWORD))
    except (httpx.HTTPError, limits.LimitExceeded) as exc:
        log.warning("VLC's HTTP interface did not answer at %s: %s", url, exc)
        return None
    if response.status_code != 200:
        log.warning("VLC's HTTP interface answered %s at %s", response.status_code, url)
        return None
    target = ctx.cache_dir / spec["dest"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(response.content)
    return str(target)


# One guest command asks xdg-mime about every type at once (each query is a shell script of its own,
# tens of milliseconds; one request each made this getter take seconds): every answer goes to a file
# named by its index, and they are printed back in order, each followed by a record separator.
_QUERY_ALL = (
    'd=$(mktemp -d) || exit 1; i=0; for t in "$@"; do '
    'xdg-mime query default "video/$t" >"$d/$i" 2>/dev/null & i=$((i+1)); done; wait;'
    ' i=0; for t in "$@"; do cat "$d/$i"; printf \'\\036\'; i=$((i+1)); done; '
    'rm -rf "$d"'
)


@getter("default_video_player")
async def get_default_video_player(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """The desktop file most video types open with (``xdg-mime query default``), or ``unknown``."""
    response = await ctx.guest.execute(["sh", "-c", _QUERY_ALL, "sh", *VIDEO_TYPES])
    answers = (response.output or "").split("\036")[: len(VIDEO_TYPES)]
    apps: list[str] = []
    for kind, answer in zip(VIDEO_TYPES, answers, strict=False):
        if answer:
            # OSWorld's list names every type twice but x-ogm+ogg; the counts (and ties) follow it.
            apps.extend([answer] * (1 if kind == "x-ogm+ogg" else 2))
    if not apps:
        return "unknown"
    return Counter(apps).most_common(1)[0][0]
