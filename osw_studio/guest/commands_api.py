"""OSWorld's command routes: ``/execute``, ``/setup/launch``, ``/run_python``, ``/run_bash_script``, ..."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from osw_studio.guest import launched
from osw_studio.guest.context import guest
from osw_studio.guest.processes import normalize_command, python_command, run_capped, run_command

router = APIRouter(tags=["osworld: commands"])


MAX_SECONDS = 86_400.0
"""The longest time any request may ask the guest to run or wait: a day (NaN, infinities refused)."""

Timeout = Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]
"""A positive, finite number of seconds of at most a day; anything else is a 422 naming the field."""

Duration = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
"""Like :data:`Timeout`, zero allowed."""


class CommandRequest(BaseModel):
    """A command as OSWorld sends it: a list of arguments, or a string (run by a shell if ``shell``)."""

    model_config = ConfigDict(extra="allow")
    command: str | list[str] = ""
    shell: bool = False
    timeout: Timeout | None = None


class VerifiedCommandRequest(CommandRequest):
    """A command, then checks repeated until they pass or ``max_wait_time`` runs out."""

    verification: dict[str, Any] = Field(default_factory=dict)
    max_wait_time: Duration = 10
    check_interval: Annotated[float, Field(ge=0.05, le=MAX_SECONDS, allow_inf_nan=False)] = 1


class PythonRequest(BaseModel):
    """Python source to run in the guest."""

    code: str = ""


class BashRequest(BaseModel):
    """A bash script to run in the guest."""

    script: str = ""
    timeout: Timeout = 100
    working_dir: str | None = None


def _malformed(exc: ValueError) -> JSONResponse:
    """400 in OSWorld's command result shape, for a command that cannot even be parsed."""
    body = {"status": "error", "output": "", "error": f"bad command: {exc}", "returncode": -1}
    return JSONResponse({**body, "message": body["error"]}, status_code=400)


@router.post("/execute", summary="Run a command and wait for it")
@router.post("/setup/execute", summary="Run a command and wait for it (setup alias)")
def execute(body: CommandRequest) -> JSONResponse:
    """Run a command to completion: ``{status, output, error, returncode}``; 500 if it cannot start.

    400 for a command that is empty, holds a NUL byte or has unbalanced quotes.
    """
    try:
        result = run_command(body.command, body.shell, body.timeout)
    except ValueError as exc:
        return _malformed(exc)
    return JSONResponse(result, status_code=500 if result["status"] == "error" else 200)


@router.post("/execute_with_verification", summary="Run a command, then wait for checks to pass")
@router.post("/setup/execute_with_verification", summary="Run a command, then wait for checks (alias)")
def execute_with_verification(body: VerifiedCommandRequest, request: Request) -> JSONResponse:
    """OSWorld's verification: ``window_exists`` (a title substring) and ``command_success`` (shell)."""
    try:
        result = run_command(body.command, body.shell, body.timeout)
    except ValueError as exc:
        return _malformed(exc)
    if result["status"] == "error" or not body.verification:
        return JSONResponse(result, status_code=500 if result["status"] == "error" else 200)
    windows = guest(request).windows
    started = time.monotonic()
    while time.monotonic() - started < body.max_wait_time:
        passed = True
        window = body.verification.get("window_exists")
        if window and not windows.find(str(window)):
            passed = False
        check = body.verification.get("command_success")
        if passed and check:
            try:
                passed = run_command(str(check), True, 5)["returncode"] == 0
            except ValueError:
                passed = False  # a malformed check never passes
        if passed:
            waited = time.monotonic() - started
            return JSONResponse({**result, "verification": "passed", "wait_time": waited})
        time.sleep(body.check_interval)
    failed = {**result, "status": "verification_failed", "verification": "failed"}
    return JSONResponse({**failed, "wait_time": body.max_wait_time}, status_code=500)


@router.post("/setup/launch", summary="Start an app without waiting")
def launch(body: CommandRequest, request: Request) -> Response:
    """Start ``command`` in the background: OSWorld's text ``<command> launched successfully``.

    500 ``{status, message}`` if it cannot start.
    """
    try:
        normalized = normalize_command(body.command, body.shell)
        pid = guest(request).launcher.launch(body.command, body.shell)
    except ValueError as exc:
        return _malformed(exc)
    except OSError as exc:
        return JSONResponse({"status": "error", "message": str(exc)}, status_code=500)
    shown = normalized if isinstance(normalized, str) else " ".join(normalized)
    return PlainTextResponse(f"{shown} launched successfully", headers={PID_HEADER: str(pid)})


PID_HEADER = "x-osw-pid"
"""Our extension to ``/setup/launch``: the PID it started, for ``/setup/launched_state``."""


class LaunchedRequest(BaseModel):
    """PIDs that ``/setup/launch`` answered with."""

    pids: list[int] = Field(default_factory=list, max_length=256)


@router.post("/setup/launched_state", summary="Whether launched programs show their windows yet")
def launched_state(body: LaunchedRequest, request: Request) -> JSONResponse:
    """``{"states": {pid: state}}``, each ``window``, ``exited``, ``no-x``, ``waiting`` or ``unknown``.

    See :mod:`osw_studio.guest.launched` for what each state means.
    """
    context = guest(request)
    found = launched.states(body.pids, context.launcher, context.windows)
    return JSONResponse({"states": {str(pid): state for pid, state in found.items()}})


@router.post("/run_python", summary="Run Python code with the guest's system Python (as OSWorld)")
def run_python(body: PythonRequest) -> JSONResponse:
    """OSWorld's ``{status, message, need_more, output, error, return_code}``."""
    if not body.code:
        return JSONResponse({"status": "error", "message": "Code not supplied!"}, status_code=400)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(body.code)
    try:
        result = run_capped([python_command(), handle.name], timeout=30)
    except OSError as exc:
        failed = {"status": "error", "message": f"Execution error: {exc}", "error": str(exc), "output": None}
        return JSONResponse({**failed, "need_more": False}, status_code=500)
    finally:
        Path(handle.name).unlink(missing_ok=True)
    if result.timed_out:
        message = "Execution timeout: Code took too long to execute"
        body_out = {"status": "error", "message": message, "error": "TimeoutExpired", "output": None}
        return JSONResponse({**body_out, "need_more": False}, status_code=500)
    error = result.stderr or (
        "" if result.returncode == 0 else f"Process exited with code {result.returncode}"
    )
    message = "\n".join(part for part in (result.stdout, error) if part)
    return JSONResponse(
        {
            "status": "success" if result.returncode == 0 else "error",
            "message": message,
            "need_more": False,
            "output": result.stdout,
            "error": error,
            "return_code": result.returncode,
        }
    )


@router.post("/run_bash_script", summary="Run a bash script; stdout and stderr merged")
def run_bash_script(body: BashRequest) -> JSONResponse:
    """OSWorld's ``{status, output, error, returncode}`` (``error`` always empty, output merged)."""
    if not body.script:
        failed = {"status": "error", "output": "Script not supplied!", "error": "", "returncode": -1}
        return JSONResponse(failed, status_code=400)
    cwd = Path(body.working_dir).expanduser() if body.working_dir else None
    if cwd and not cwd.is_dir():
        missing = f"Working directory does not exist: {cwd}"
        return JSONResponse({"status": "error", "output": missing, "error": "", "returncode": -1}, 400)
    script = body.script if "#!/bin/bash" in body.script else "#!/bin/bash\n\n" + body.script
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as handle:
        handle.write(script)
    try:
        result = run_capped(["/bin/bash", handle.name], timeout=body.timeout, cwd=cwd, merge_stderr=True)
    except OSError as exc:
        return JSONResponse({"status": "error", "output": str(exc), "error": "", "returncode": -1}, 500)
    finally:
        Path(handle.name).unlink(missing_ok=True)
    if result.timed_out:
        timed_out = f"Script execution timed out after {body.timeout:g} seconds"
        return JSONResponse({"status": "error", "output": timed_out, "error": "", "returncode": -1}, 500)
    status = "success" if result.returncode == 0 else "error"
    return JSONResponse(
        {"status": status, "output": result.stdout, "error": "", "returncode": result.returncode}
    )
