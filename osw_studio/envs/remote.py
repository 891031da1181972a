"""``RemoteEnv``: an env over any guest server, ours or OSWorld's, reached by URL.

On connect it asks ``GET /capabilities``. Our guest servers answer, and actions go as core actions
through ``POST /input`` (XTest in the guest, exact Unicode). OSWorld guests answer 404; then actions
are turned into pyautogui code by :func:`osw_studio.actions.render_pyautogui` and sent through
``/execute`` as ``python -c``, exactly as OSWorld's own ``PythonController`` does. Only code generated
from typed actions reaches the guest, never model text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

from osw_studio.core.actions import Action
from osw_studio.core.errors import GuestError
from osw_studio.core.observation import Observation
from osw_studio.core.task import Task
from osw_studio.envs.base import Env
from osw_studio.envs.guest_client import Capabilities, GuestClient, RetryPolicy
from osw_studio.envs.setup import SetupOptions, SetupRunner
from osw_studio.tasks.assets import AssetStore

PYAUTOGUI_PREFIX = "import pyautogui; import time; pyautogui.FAILSAFE = False; "
"""What OSWorld's ``PythonController`` puts before every command it sends to ``/execute``."""

QUIET_CLIPBOARD = (
    "import os as _os, sys as _sys, pyperclip as _pyperclip\n"
    "def _quietly(copy):\n"
    "    def quiet_copy(text):\n"
    "        _sys.stdout.flush(); _sys.stderr.flush()\n"
    "        saved, null = (_os.dup(1), _os.dup(2)), _os.open(_os.devnull, _os.O_WRONLY)\n"
    "        _os.dup2(null, 1); _os.dup2(null, 2)\n"
    "        try:\n"
    "            copy(text)\n"
    "        finally:\n"
    "            _os.dup2(saved[0], 1); _os.dup2(saved[1], 2)\n"
    "            for fd in (*saved, null): _os.close(fd)\n"
    "    return quiet_copy\n"
    "_pyperclip.copy = _quietly(_pyperclip.determine_clipboard()[0])\n"
)
"""Put before generated code that pastes through ``pyperclip``: its clipboard program (``xclip``,
``xsel``) stays in the background to hold the selection, and with the command's stdout and stderr it
kept OSWorld's ``/execute`` (which reads both to their end) waiting for its 120 s timeout. Here the
program gets ``/dev/null`` for both; the clipboard mechanism is still pyperclip's own choice."""

NO_OP_KINDS = frozenset({"done", "fail", "wait", "call_user"})
"""Actions that end or pause an episode; the runner handles them, the guest never sees them."""


def pyautogui_command(actions: Sequence[Action]) -> list[str] | None:
    """The ``/execute`` command that performs ``actions`` on an OSWorld guest (None: nothing to do).

    ``python -c`` with OSWorld's pyautogui prefix, as its ``PythonController`` sends, and
    :data:`QUIET_CLIPBOARD` when the code pastes text pyautogui cannot type (non-ASCII).

    Examples:
        >>> from osw_studio.core.actions import Click, Typing
        >>> pyautogui_command([Click(x=1, y=2)])[2]
        'import pyautogui; import time; pyautogui.FAILSAFE = False; pyautogui.click(1, 2)'
        >>> "determine_clipboard" in pyautogui_command([Typing(text="é")])[2]
        True
    """
    from osw_studio.actions.pyautogui import render_pyautogui

    code = render_pyautogui([a for a in actions if a.kind not in NO_OP_KINDS])
    if not code.strip():
        return None
    quiet = QUIET_CLIPBOARD if "pyperclip." in code else ""
    return ["python", "-c", PYAUTOGUI_PREFIX + quiet + code]


class RemoteEnv(Env):
    """An env over one guest server.

    Args:
        guest: The guest server's client (the env closes it).
        setup: Where setup steps find files (asset cache, task folder) and the client password.
        name: A label for logs and the UI.
    """

    def __init__(self, guest: GuestClient, *, setup: SetupOptions | None = None, name: str | None = None):
        self._guest = guest
        self.setup_options = setup or SetupOptions()
        self._task_dir: Path | None = self.setup_options.task_dir
        self.name = name or f"remote:{guest.base_url}"
        self._capabilities: Capabilities | None = None
        self._screen: tuple[int, int] | None = None
        self._connected = False
        self._closed = False

    @classmethod
    async def open(
        cls,
        url: str,
        token: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        setup: SetupOptions | None = None,
        **client_options: Any,
    ) -> Self:
        """Connect to the guest server at ``url`` and learn what it can do.

        Raises:
            GuestError: If the server cannot be reached or refuses the token.
        """
        env = cls(GuestClient(url, token, retry=retry, **client_options), setup=setup)
        try:
            await env.connect()
        except BaseException:
            await env.close()
            raise
        return env

    async def connect(self) -> None:
        """Ask the guest for its capabilities and screen size (done once; ``open`` calls it)."""
        self._capabilities = await self._guest.capabilities()
        screen = self._capabilities.screen if self._capabilities else None
        self._screen = (int(screen[0]), int(screen[1])) if screen else await self._guest.screen_size()
        self._connected = True

    @property
    def guest(self) -> GuestClient:
        """The client of this env's guest server."""
        return self._guest

    @property
    def capabilities(self) -> Capabilities | None:
        """The guest server's capabilities; ``None`` for an OSWorld guest."""
        return self._capabilities

    @property
    def screen_size(self) -> tuple[int, int]:
        """``(width, height)`` of the guest screen."""
        if self._screen is None:
            raise GuestError(
                "the env is not connected yet", where=self.name, hint="await env.connect() or use open()"
            )
        return self._screen

    async def _ready(self) -> None:
        if self._closed:
            raise GuestError("the env is closed", where=self.name, hint="create a new env")
        if not self._connected:
            await self.connect()

    async def reset(self, task: Task | None = None, *, task_dir: Path | None = None) -> Observation:
        """Run the task's ``config`` steps (checked first), then observe.

        A remote guest cannot be reverted to a snapshot from here; reset brings it to the task's start
        state only as far as the setup steps do.

        Args:
            task: The task, or ``None`` to just observe.
            task_dir: The task file's folder (plain paths in ``download`` steps are relative to it).
        """
        await self._ready()
        options = self.setup_options
        if task_dir is not None:
            options = SetupOptions(**{**vars(options), "task_dir": task_dir})
        if options.port_url is None:
            options = SetupOptions(**{**vars(options), "port_url": self.guest_port_url})
        self._task_dir = options.task_dir
        if task is not None and task.config:
            await SetupRunner(self._guest, options).run(task.config, task_id=task.id)
        return await self.observe()

    @property
    def task_dir(self) -> Path | None:
        """The folder of the task last reset (given to :meth:`reset`, else the setup options')."""
        return self._task_dir

    @property
    def asset_cache(self) -> Path | None:
        """The asset cache folder of the setup options."""
        return self.setup_options.cache_dir

    @property
    def asset_store(self) -> AssetStore | None:
        """The asset cache of the setup options."""
        return self.setup_options.assets

    async def observe(self, *, accessibility_tree: bool = False) -> Observation:
        """Grab the screen as PNG (and OSWorld's accessibility XML when asked and available)."""
        await self._ready()
        png = await self._guest.screenshot()
        tree = await self._guest.accessibility_tree() if accessibility_tree else None
        width, height = self.screen_size
        return Observation(
            screenshot=png, image_format="png", width=width, height=height, accessibility_tree=tree
        )

    async def execute(self, actions: Sequence[Action]) -> None:
        """Perform actions: ``/input`` on our guests, generated pyautogui via ``/execute`` on OSWorld's."""
        await self._ready()
        todo = [a for a in actions if a.kind not in NO_OP_KINDS]
        if not todo:
            return
        if self._capabilities is not None and self._capabilities.input:
            await self._guest.input(todo)
            return
        command = pyautogui_command(todo)
        if command is None:
            return
        result = await self._guest.execute(command, shell=False)
        if not result.ok:
            raise GuestError(
                f"the guest's pyautogui failed (exit {result.returncode}): {result.error.strip()[-300:]}",
                where=f"{self._guest.base_url}/execute",
                hint="is pyautogui installed in the guest and its display reachable?",
            )

    async def close(self) -> None:
        """Close the connection. Safe to call twice."""
        if not self._closed:
            self._closed = True
            await self._guest.aclose()


class RemoteProvider:
    """The ``remote`` provider: envs over guest servers that already run (VMs, containers, machines)."""

    async def create(
        self,
        url: str = "http://127.0.0.1:5000",
        token: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        setup: SetupOptions | None = None,
        **client_options: Any,
    ) -> RemoteEnv:
        """Connect to the guest server at ``url``.

        Raises:
            GuestError: If it cannot be reached or refuses the token.
        """
        return await RemoteEnv.open(url, token, retry=retry, setup=setup, **client_options)
