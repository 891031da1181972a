"""VS Code's getter: run a command of the editor's palette, then fetch the file it wrote.

OSWorld's tasks ship an extension whose palette command (``vscode_extension_command``) writes the editor's
state to ``path``; the getter opens the palette (Ctrl+Shift+P), types the command, presses Enter, waits
a second and copies ``path`` to ``dest`` as ``vm_file`` does (a missing file scores the metric 0).
"""

from __future__ import annotations

import asyncio
from typing import Any

from osw_studio.core.actions import Action, Hotkey, Press, Typing
from osw_studio.evaluation.getters.files import get_vm_file
from osw_studio.evaluation.registry import GetterContext, getter

SETTLE_SECONDS = 1.0
"""How long the command gets to write its file (OSWorld's wait)."""


async def perform(ctx: GetterContext, actions: list[Action]) -> None:
    """Perform ``actions`` in the guest: ``/input`` on our guests, generated pyautogui on OSWorld's."""
    capabilities = await ctx.guest.capabilities()
    if capabilities is not None and capabilities.input:
        await ctx.guest.input(actions)
        return
    from osw_studio.envs.remote import pyautogui_command

    command = pyautogui_command(actions)
    if command is not None:
        await ctx.guest.execute(command)


@getter("vscode_config")
async def get_vscode_config(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """Run the palette command ``vscode_extension_command``, then copy ``path`` to ``dest``."""
    await perform(
        ctx,
        [
            Hotkey(keys=["ctrl", "shift", "p"]),
            Typing(text=spec["vscode_extension_command"]),
            Press(key="enter"),
        ],
    )
    await asyncio.sleep(SETTLE_SECONDS)
    return await get_vm_file(ctx, {"path": spec["path"], "dest": spec["dest"]})
