"""VS Code's getter: run a command of the editor's palette, then fetch the file it wrote.

OSWorld's tasks ship an extension whose palette command (``vscode_extension_command``) writes the editor's
state to ``path``; the getter raises the window titled "Visual Studio Code", opens the palette
(Ctrl+Shift+P), types the command, presses Enter, waits a second and copies ``path`` to ``dest`` as
``vm_file`` does. As OSWorld at the tasks' commit, when that file is missing the ``workspace.json`` files
of the editor's workspace storage are fetched instead (concatenated into ``dest``; ``""`` when there are
none).
"""

from __future__ import annotations

import asyncio
from typing import Any

from osw_studio.core.actions import Action, Hotkey, Press, Typing
from osw_studio.core.paths import task_dest
from osw_studio.evaluation.getters.files import FileMissing, get_vm_file
from osw_studio.evaluation.getters.guest import get_vm_command_line
from osw_studio.evaluation.registry import GetterContext, getter

SETTLE_SECONDS = 1.0
"""How long the command gets to write its file (OSWorld's wait)."""
ACTIVATE_SECONDS = 0.5
"""How long the raised window gets before the palette keys (OSWorld's wait)."""
WORKSPACE_SCAN = (
    "/bin/bash -lc 'find /home/user/.config/Code/User/workspaceStorage "
    "-name workspace.json -exec cat {} \\; 2>/dev/null'"
)
"""The fallback's command: every workspace.json of VS Code's workspace storage (OSWorld's guest user)."""


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
    await ctx.guest.activate_window("Visual Studio Code")
    await asyncio.sleep(ACTIVATE_SECONDS)
    await perform(
        ctx,
        [
            Hotkey(keys=["ctrl", "shift", "p"]),
            Typing(text=spec["vscode_extension_command"]),
            Press(key="enter"),
        ],
    )
    await asyncio.sleep(SETTLE_SECONDS)
    try:
        return await get_vm_file(ctx, {"path": spec["path"], "dest": spec["dest"]})
    except FileMissing:
        dump = await get_vm_command_line(ctx, {"command": WORKSPACE_SCAN, "shell": True})
    if not dump:
        return ""
    target = task_dest(ctx.cache_dir, str(spec["dest"]), where="evaluator getter dest")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dump, encoding="utf-8")
    return str(target)
