"""OSWorld task files as typed models.

A task is OSWorld's JSON (``id, snapshot, instruction, source, config, trajectory, related_apps,
evaluator, proxy, fixed_ip, possibility_of_env_change, ...``). Setup steps are typed by their ``type``;
the evaluator keeps OSWorld's shapes (a single ``func`` or a list with ``conj`` and parallel
``result``/``expected``/``options`` lists). Unknown keys are kept everywhere, so
``load -> dump -> load`` is lossless.

Examples:
    >>> t = Task.model_validate({
    ...     "id": "t1", "instruction": "Say hi",
    ...     "config": [{"type": "sleep", "parameters": {"seconds": 1}}],
    ...     "evaluator": {"func": "infeasible"}, "custom": 3})
    >>> t.config[0].type, t.config[0].parameters.seconds
    ('sleep', 1)
    >>> t.dump()["custom"]
    3
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from osw_studio.core.actions import Action

ShellFlag = bool | Literal["true", "false", "True", "False"]
"""OSWorld passes ``shell`` through as given; a few tasks write it as the string ``"true"``."""

Command = str | list[str]

DesktopName = Literal["studio", "osworld"]
"""The local sandbox's applications: the bundled tasks' (``studio``) or OSWorld's (``osworld``)."""


class _Open(BaseModel):
    """A model that keeps keys it does not know, so dumping gives back what was loaded."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


def shell_flag(value: ShellFlag) -> bool:
    """Interpret an OSWorld ``shell`` parameter.

    >>> shell_flag("true"), shell_flag(False)
    (True, False)
    """
    if isinstance(value, str):
        return value.lower() == "true"
    return value


# --- setup step parameters -------------------------------------------------------------------------


class DownloadFile(_Open):
    """One file of a ``download`` step: fetched from ``url`` and written to ``path`` in the guest."""

    url: str = Field(min_length=1)
    path: str = Field(min_length=1)


class DownloadParams(_Open):
    """Parameters of ``download``."""

    files: list[DownloadFile]


class UploadFile(_Open):
    """One file of an ``upload_file`` step: a host file copied to ``path`` in the guest."""

    local_path: str = Field(min_length=1)
    path: str = Field(min_length=1)


class UploadParams(_Open):
    """Parameters of ``upload_file``."""

    files: list[UploadFile]


class OpenParams(_Open):
    """Parameters of ``open``: a path in the guest, opened with its default application."""

    path: str = Field(min_length=1)


class LaunchParams(_Open):
    """Parameters of ``launch``: start a program in the background."""

    command: Command
    shell: ShellFlag = False


class ExecuteParams(_Open):
    """Parameters of ``execute`` and ``command``: run a command and wait for it.

    ``until`` (``{"returncode": 0}`` or ``{"stdout": "..."}``) retries the command until it holds.
    """

    command: Command
    shell: ShellFlag = False
    stdout: str | None = None
    stderr: str | None = None
    until: dict[str, Any] | None = None


class VerifiedExecuteParams(ExecuteParams):
    """Parameters of ``execute_with_verification``."""

    verification: dict[str, Any] | None = None
    max_wait_time: float = 10
    check_interval: float = 1


class SleepParams(_Open):
    """Parameters of ``sleep``."""

    seconds: int | float = Field(ge=0)


class WindowParams(_Open):
    """Parameters of ``activate_window`` and ``close_window``."""

    window_name: str = Field(min_length=1)
    strict: bool = False
    by_class: bool = False


class WallpaperParams(_Open):
    """Parameters of ``change_wallpaper``."""

    path: str = Field(min_length=1)


class OpenTabsParams(_Open):
    """Parameters of ``chrome_open_tabs``."""

    urls_to_open: list[str]


class CloseTabsParams(_Open):
    """Parameters of ``chrome_close_tabs``."""

    urls_to_close: list[str]


class BrowseHistoryParams(_Open):
    """Parameters of ``update_browse_history``."""

    history: list[dict[str, Any]]


class GoogleDriveParams(_Open):
    """Parameters of ``googledrive`` (needs Google credentials)."""

    settings_file: str
    operation: list[str]
    args: list[dict[str, Any]]


class LoginParams(_Open):
    """Parameters of ``login`` (needs the platform's credentials)."""

    settings_file: str
    platform: str


# --- setup steps -------------------------------------------------------------------------------------


class _Step(_Open):
    type: str


class DownloadStep(_Step):
    """Download files into the guest."""

    type: Literal["download"]
    parameters: DownloadParams


class UploadFileStep(_Step):
    """Copy host files into the guest."""

    type: Literal["upload_file"]
    parameters: UploadParams


class OpenStep(_Step):
    """Open a file in the guest with its default application."""

    type: Literal["open"]
    parameters: OpenParams


class LaunchStep(_Step):
    """Start a program in the guest without waiting for it."""

    type: Literal["launch"]
    parameters: LaunchParams


class ExecuteStep(_Step):
    """Run a command in the guest and wait for it (``command`` is an alias OSWorld also uses)."""

    type: Literal["execute", "command"]
    parameters: ExecuteParams


class VerifiedExecuteStep(_Step):
    """Run a command, then poll until a verification holds."""

    type: Literal["execute_with_verification"]
    parameters: VerifiedExecuteParams


class SleepStep(_Step):
    """Wait."""

    type: Literal["sleep"]
    parameters: SleepParams


class ActivateWindowStep(_Step):
    """Raise and focus a window by title (or class)."""

    type: Literal["activate_window"]
    parameters: WindowParams


class CloseWindowStep(_Step):
    """Close a window by title (or class)."""

    type: Literal["close_window"]
    parameters: WindowParams


class ChangeWallpaperStep(_Step):
    """Set the desktop wallpaper."""

    type: Literal["change_wallpaper"]
    parameters: WallpaperParams


class ChromeOpenTabsStep(_Step):
    """Open URLs in the browser through its DevTools port."""

    type: Literal["chrome_open_tabs"]
    parameters: OpenTabsParams


class ChromeCloseTabsStep(_Step):
    """Close browser tabs by URL through its DevTools port."""

    type: Literal["chrome_close_tabs"]
    parameters: CloseTabsParams


class UpdateBrowseHistoryStep(_Step):
    """Write entries into the browser's history database."""

    type: Literal["update_browse_history"]
    parameters: BrowseHistoryParams


class GoogleDriveStep(_Step):
    """Prepare Google Drive (needs Google credentials)."""

    type: Literal["googledrive"]
    parameters: GoogleDriveParams


class LoginStep(_Step):
    """Log in to an online platform (needs its credentials)."""

    type: Literal["login"]
    parameters: LoginParams


SetupStep = Annotated[
    DownloadStep
    | UploadFileStep
    | OpenStep
    | LaunchStep
    | ExecuteStep
    | VerifiedExecuteStep
    | SleepStep
    | ActivateWindowStep
    | CloseWindowStep
    | ChangeWallpaperStep
    | ChromeOpenTabsStep
    | ChromeCloseTabsStep
    | UpdateBrowseHistoryStep
    | GoogleDriveStep
    | LoginStep,
    Field(discriminator="type"),
]
"""Any one setup (``config``) or ``postconfig`` step."""

SETUP_STEP_TYPES: tuple[str, ...] = (
    "download",
    "upload_file",
    "open",
    "launch",
    "execute",
    "command",
    "execute_with_verification",
    "sleep",
    "activate_window",
    "close_window",
    "change_wallpaper",
    "chrome_open_tabs",
    "chrome_close_tabs",
    "update_browse_history",
    "googledrive",
    "login",
)


# --- evaluator ---------------------------------------------------------------------------------------


class GetterSpec(_Open):
    """How to obtain one value to score: ``type`` names a getter; the other keys are its arguments."""

    type: str = Field(min_length=1)

    @property
    def args(self) -> dict[str, Any]:
        """The getter's arguments: every key but ``type``."""
        return dict(self.model_extra or {})


class Evaluator(_Open):
    """OSWorld's evaluator block."""

    func: str | list[str]
    conj: Literal["and", "or"] | None = None
    result: GetterSpec | list[GetterSpec | None] | None = None
    expected: GetterSpec | list[GetterSpec | None] | None = None
    options: dict[str, Any] | list[dict[str, Any] | None] | None = None
    postconfig: list[SetupStep] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_lists(self) -> Evaluator:
        funcs = self.funcs
        if not funcs or any(not f for f in funcs):
            raise ValueError("func must name at least one metric")
        if isinstance(self.func, list):
            for name in ("result", "expected", "options"):
                value = getattr(self, name)
                if value is not None and not isinstance(value, list):
                    raise ValueError(f"{name} must be a list parallel to func when func is a list")
                if isinstance(value, list) and len(value) != len(funcs):
                    raise ValueError(f"{name} has {len(value)} entries but func has {len(funcs)}")
        else:
            for name in ("result", "expected", "options"):
                if isinstance(getattr(self, name), list):
                    raise ValueError(f"{name} must not be a list when func is a single name")
        return self

    @property
    def funcs(self) -> list[str]:
        """The metric names, as a list."""
        return list(self.func) if isinstance(self.func, list) else [self.func]


# --- task -------------------------------------------------------------------------------------------


class SolutionStep(_Open):
    """One step of a task's reference solution: the actions a person (or script) performed.

    Reference solutions live in the task file under the extra key ``solution`` (OSWorld ignores keys it
    does not know, so the file stays a valid OSWorld task). ``screenshot`` optionally names the screen the
    step acted on, relative to the task file.
    """

    actions: list[Action]
    note: str | None = None
    screenshot: str | None = None


class Task(_Open):
    """One OSWorld task."""

    id: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    snapshot: str | None = None
    source: str | list[str] | None = None
    config: list[SetupStep] = Field(default_factory=list)
    trajectory: str | None = None
    related_apps: list[str] = Field(default_factory=list)
    evaluator: Evaluator
    proxy: bool | None = None
    fixed_ip: bool | None = None
    possibility_of_env_change: str | None = None
    hint: str | None = None
    env_may_change: bool | None = None
    solution: list[SolutionStep] | None = None
    desktop: DesktopName | None = None
    """The desktop the task needs (our key, which OSWorld ignores): it runs there whatever the default."""

    @property
    def infeasible(self) -> bool:
        """Whether the task is meant to be answered with FAIL."""
        return "infeasible" in self.evaluator.funcs

    def dump(self) -> dict[str, Any]:
        """The task as plain JSON data, with exactly the keys it was loaded with (plus set ones)."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)
