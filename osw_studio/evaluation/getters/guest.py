"""Getters that ask the guest server: command output, terminal, accessibility tree, sizes, folders."""

from __future__ import annotations

from typing import Any

from osw_studio.core.errors import EvaluationError, GuestError
from osw_studio.core.task import shell_flag
from osw_studio.envs.guest_client import CommandResult
from osw_studio.evaluation.getters.files import FileMissing, get_vm_file
from osw_studio.evaluation.registry import GetterContext, NoValue, getter


async def _execute(ctx: GetterContext, command: str | list[str], shell: Any = False) -> CommandResult:
    try:
        return await ctx.guest.execute(command, shell=shell_flag(shell))
    except GuestError as exc:
        # A guest that answers but fails the command (HTTP 5xx) gives OSWorld's getter None, which its
        # metrics score 0; a guest that cannot be reached, or refuses the token, stays an error.
        if exc.status is not None and exc.status >= 500:
            raise NoValue(f"the guest failed the command (HTTP {exc.status})") from exc
        raise


@getter("vm_command_line")
async def get_vm_command_line(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """The standard output of ``command`` run in the guest (OSWorld's ``/execute`` ``output``)."""
    response = await _execute(ctx, spec["command"], spec.get("shell", False))
    return response.output


@getter("vm_command_error")
async def get_vm_command_error(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """The standard error of ``command`` run in the guest (OSWorld's ``/execute`` ``error``)."""
    response = await _execute(ctx, spec["command"], spec.get("shell", False))
    return response.error


@getter("vm_terminal_output")
async def get_vm_terminal_output(ctx: GetterContext, spec: dict[str, Any]) -> str | None:
    """The text of the guest's focused terminal, or None when there is none."""
    output: str | None = await ctx.guest.terminal_output()
    return output


@getter("accessibility_tree")
async def get_accessibility_tree(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """The guest's accessibility tree as OSWorld's XML."""
    tree = await ctx.guest.accessibility_tree()
    if tree is None:
        raise EvaluationError(
            "the guest has no accessibility tree (AT-SPI is not available there)",
            hint="run the task on a guest with AT-SPI (the local sandbox starts it)",
        )
    return tree


@getter("list_directory")
async def get_list_directory(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """The tree of a guest folder as OSWorld's ``{"name", "type", "children"}`` dicts."""
    return await ctx.guest.list_directory(spec["path"])


@getter("vm_screen_size")
async def get_vm_screen_size(ctx: GetterContext, spec: dict[str, Any]) -> dict[str, int]:
    """``{"width", "height"}`` of the guest screen."""
    width, height = await ctx.guest.screen_size()
    return {"width": width, "height": height}


@getter("vm_window_size")
async def get_vm_window_size(ctx: GetterContext, spec: dict[str, Any]) -> dict[str, int] | None:
    """``{"width", "height"}`` of the window of class ``app_class_name``, or None without one."""
    size = await ctx.guest.window_size(spec["app_class_name"])
    if size is None:
        return None
    return {"width": size[0], "height": size[1]}


async def _home_file(ctx: GetterContext, relative: str, dest: str) -> str | None:
    response = await _execute(ctx, ["sh", "-c", f'printf %s "$HOME/{relative}"'])
    path = response.output.strip()
    try:
        result = await get_vm_file(ctx, {"path": path, "dest": dest})
    except FileMissing:
        # OSWorld's app config getters return None for a missing file; the metric then scores it.
        return None
    return str(result)


@getter("vlc_config")
async def get_vlc_config(ctx: GetterContext, spec: dict[str, Any]) -> str | None:
    """VLC's ``~/.config/vlc/vlcrc`` from the guest, saved as ``dest``."""
    return await _home_file(ctx, ".config/vlc/vlcrc", spec["dest"])


@getter("gimp_config_file")
async def get_gimp_config_file(ctx: GetterContext, spec: dict[str, Any]) -> str | None:
    """GIMP's ``~/.config/GIMP/2.10/<file_name>`` from the guest, saved as ``dest``."""
    return await _home_file(ctx, f".config/GIMP/2.10/{spec['file_name']}", spec["dest"])
