"""``check_env``: the conformance check every provider passes (as Gymnasium ships ``check_env``).

It drives a live env the way an episode does and checks what a user would see: observations have the
documented shape, the screenshot is as large as the screen, a click lands where it was asked, and typed
text (Unicode when the guest supports it) arrives exactly. It needs ``xterm`` and ``xdotool`` in the
guest, as the local sandbox has.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from osw_studio.core.actions import Click, Typing
from osw_studio.core.errors import GuestError
from osw_studio.core.observation import Observation
from osw_studio.envs.base import Env
from osw_studio.trajectory.layout import image_size

UNICODE_TEXT = "Hello, Ünïcode € 日本 ok"
ASCII_TEXT = "Hello, ASCII ~!@#$%^&*()_+ ok"


def _fail(check: str, message: str) -> GuestError:
    return GuestError(message, where=f"check_env: {check}")


def _check_observation(obs: Any, env: Env, check: str) -> None:
    if not isinstance(obs, Observation):
        raise _fail(check, f"expected an Observation, got {type(obs).__name__}")
    if obs.size != env.screen_size:
        raise _fail(check, f"observation size {obs.size} differs from the screen size {env.screen_size}")
    size = image_size(obs.screenshot)
    if size is None:
        raise _fail(check, "the screenshot is not a PNG or JPEG image")
    if size != env.screen_size:
        raise _fail(check, f"the screenshot is {size[0]}x{size[1]}, the screen {env.screen_size}")


async def check_env(env: Env, *, unicode: bool | None = None, wait: float = 15.0) -> list[str]:
    """Check that ``env`` behaves as the env protocol promises; return the names of the checks passed.

    Args:
        env: A connected env.
        unicode: Type non-ASCII text; by default when the guest says it can (``unicode_typing``).
        wait: Seconds to wait for the test terminal to appear and the text to arrive.

    Raises:
        GuestError: Naming the first check that failed and what was seen.
    """
    passed: list[str] = []
    _check_observation(await env.reset(None), env, "reset")
    passed.append("reset")
    _check_observation(await env.observe(), env, "observe")
    passed.append("observe")

    width, height = env.screen_size
    for x, y in ((width // 3, height // 4), (width - 7, height - 5), (width // 2, height // 2)):
        await env.execute([Click(x=x, y=y)])
        at = await env.guest.cursor_position()
        if at != (x, y):
            raise _fail("click", f"clicked at ({x}, {y}) but the pointer is at {at}")
    passed.append("click")

    if unicode is None:
        capabilities = getattr(env, "capabilities", None)
        unicode = bool(capabilities and capabilities.unicode_typing)
    text = UNICODE_TEXT if unicode else ASCII_TEXT
    await _check_typing(env, text, wait)
    passed.append("typing (Unicode)" if unicode else "typing (ASCII)")
    return passed


async def _check_typing(env: Env, text: str, wait: float) -> None:
    """Type into an xterm running ``cat > FILE`` and read FILE back through the guest."""
    guest = env.guest
    tag = secrets.token_hex(4)
    title, path = f"osw-check-{tag}", f"/tmp/osw-check-{tag}.txt"
    await guest.launch(
        ["xterm", "-title", title, "-geometry", "60x6+30+30", "-e", "sh", "-c", f"cat > {path}"]
    )
    try:
        geometry = await _window_geometry(env, title, wait)
        cx, cy = geometry[0] + geometry[2] // 2, geometry[1] + geometry[3] // 2
        await env.execute([Click(x=cx, y=cy), Typing(text=text + "\n")])
        expected = (text + "\n").encode()
        got: bytes | None = None
        for _ in range(int(wait / 0.2)):
            got = await guest.get_file(path)
            if got == expected:
                return
            await asyncio.sleep(0.2)
        shown = got.decode(errors="replace") if got is not None else "no file"
        raise _fail("typing", f"typed {text!r} but the terminal received {shown!r}")
    finally:
        await guest.execute(["sh", "-c", f"xdotool search --name {title} windowkill; rm -f {path}"])


async def _window_geometry(env: Env, title: str, wait: float) -> tuple[int, int, int, int]:
    for _ in range(int(wait / 0.1)):
        result = await env.guest.execute(
            ["xdotool", "search", "--onlyvisible", "--name", title, "getwindowgeometry", "--shell"]
        )
        if result.returncode == 0 and "WIDTH=" in result.output:
            values = dict(line.split("=", 1) for line in result.output.splitlines() if "=" in line)
            return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])
        await asyncio.sleep(0.1)
    raise _fail(
        "typing", f"the test terminal ({title!r}) did not appear within {wait:g} s; is xterm installed?"
    )
