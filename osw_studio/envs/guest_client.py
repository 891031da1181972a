"""The host-side client of a guest server: OSWorld's guest API plus OSW Studio's extensions.

:class:`GuestClient` mirrors OSWorld's ``PythonController`` (and the parts of its ``SetupController``
that talk to the guest) as async methods over one :class:`httpx.AsyncClient`. It speaks the same
request shapes to our own guest server and to an OSWorld VM's server; :meth:`GuestClient.capabilities`
tells them apart (``None`` on OSWorld guests, which answer 404).

Retries follow OSWorld by default: reads are tried 3 times, 5 seconds apart; actions are sent once,
except when the connection could not even be opened (then nothing ran and a retry is safe). A timed-out
action is never retried, since it may still be running in the guest. Every failure is a
:class:`~osw_studio.core.errors.GuestError` naming the URL and what to do about it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

import httpx
from pydantic import BaseModel, ConfigDict

from osw_studio.core import limits
from osw_studio.core.actions import Action, dump_actions
from osw_studio.core.bounded_http import MAX_BYTES_EXTENSION, accept_encoding, bound_responses
from osw_studio.core.errors import GuestError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """How often a failed read is tried again.

    Attributes:
        attempts: Tries in all (OSWorld: 3).
        delay: Seconds between tries (OSWorld: 5).
    """

    attempts: int = 3
    delay: float = 5.0


class CommandResult(BaseModel):
    """What ``/execute`` and friends answer: ``{status, output, error, returncode}``."""

    model_config = ConfigDict(extra="allow")

    status: str = "success"
    output: str = ""
    error: str = ""
    returncode: int = 0

    @property
    def ok(self) -> bool:
        """Whether the command ran and exited with 0."""
        return self.status == "success" and self.returncode == 0


class Capabilities(BaseModel):
    """``GET /capabilities`` of an OSW Studio guest server (OSWorld guests have none)."""

    model_config = ConfigDict(extra="allow")

    server: str = "osw-studio"
    version: str = ""
    input: bool = False
    stream: bool = False
    screenshot_formats: list[str] = ["png"]
    unicode_typing: bool = False
    accessibility: bool = False
    recording: bool = False
    display: str | None = None
    screen: tuple[int, int] | None = None


KEEP_ALIVE_S = 2.0
"""Seconds an idle connection is kept for reuse: below the servers' 5 s (ours and OSWorld's Flask), so
the client never sends on a connection the server is closing at that moment."""

_NOT_RETRIED = frozenset({400, 401, 403, 404, 405, 413, 415, 422, 501})
"""Statuses that another try cannot change."""


class GuestClient:
    """Async client of one guest server.

    Args:
        base_url: The guest server, e.g. ``http://127.0.0.1:5000``.
        token: The server's bearer token; ``None`` for OSWorld guests and ``--no-token`` servers.
        retry: How reads are retried.
        timeout: Seconds to wait for a read.
        action_timeout: Seconds to wait for an action (``/execute`` runs commands; OSWorld: 120).
        transport: An httpx transport (tests pass one to reach in-process servers).
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        action_timeout: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.action_timeout = action_timeout
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        headers["Accept-Encoding"] = accept_encoding()
        # Every answer is read against a cap as it arrives (limits.GUEST_*), decoded size included.
        self._http: httpx.AsyncClient = bound_responses(
            httpx.AsyncClient(
                base_url=self.base_url,
                headers=headers,
                timeout=timeout,
                transport=transport,
                limits=httpx.Limits(keepalive_expiry=KEEP_ALIVE_S),
            ),
            limits.GUEST_ANSWER_BYTES,
            "the guest server's answer",
        )

    def __repr__(self) -> str:
        return f"GuestClient({self.base_url!r})"

    async def aclose(self) -> None:
        """Close the connection pool. Safe to call twice."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- transport ---------------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        endpoint: str,
        *,
        read: bool,
        ok: Sequence[int] = (200,),
        wait: float | None = None,
        cap: int | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """Send one request with the retry rules; return a response whose status is in ``ok``.

        ``cap`` is the answer's cap in bytes (default :data:`~osw_studio.core.limits.GUEST_ANSWER_BYTES`).
        """
        url = f"{self.base_url}{endpoint}"
        if cap is not None:
            kwargs["extensions"] = {MAX_BYTES_EXTENSION: cap}
        if wait is None:
            wait = self.timeout if read else self.action_timeout
        attempts = max(1, self.retry.attempts)
        error: GuestError | None = None
        for attempt in range(1, attempts + 1):
            retryable = False
            try:
                response = await self._http.request(method, endpoint, timeout=wait, **kwargs)
            except limits.LimitExceeded as exc:
                # Another try would read as much again: a guest answering this is broken or hostile.
                raise GuestError(
                    str(exc), where=url, hint="the guest sent more than any real guest does; is it yours?"
                ) from None
            except httpx.ConnectError as exc:
                # Nothing reached the server, so even an action is safe to send again.
                error = GuestError(
                    f"cannot connect to the guest server ({exc or 'connection refused'})",
                    where=url,
                    hint="is the guest server running? Start it with `osw-studio guest serve` "
                    "or check the host and port",
                )
                retryable = True
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                # The connection was open and then dropped: the server died or restarted mid-request.
                detail = f": {exc}" if str(exc) else ""
                error = GuestError(
                    f"the guest server dropped the connection ({type(exc).__name__}{detail})",
                    where=url,
                    hint="the guest server may have crashed or restarted; is it still running? (see its log)",
                )
                retryable = read
            except httpx.TimeoutException:
                error = GuestError(
                    f"the guest server did not answer within {wait:g} s",
                    where=url,
                    hint="the guest may be overloaded or hung; raise the timeout or restart the guest",
                )
                retryable = read
            except httpx.HTTPError as exc:
                error = GuestError(
                    f"the request failed: {exc}", where=url, hint="check the guest server's URL and logs"
                )
                retryable = read
            else:
                if response.status_code in ok:
                    return response
                error = _status_error(response, url)
                retryable = read and response.status_code not in _NOT_RETRIED
            if not retryable or attempt == attempts:
                break
            log.info(
                "%s failed (try %d of %d): %s; retrying in %g s",
                url,
                attempt,
                attempts,
                error,
                self.retry.delay,
            )
            await asyncio.sleep(self.retry.delay)
        assert error is not None
        raise error

    async def _json(self, method: str, endpoint: str, *, read: bool, **kwargs: Any) -> Any:
        kwargs.setdefault("cap", limits.GUEST_JSON_BYTES)
        response = await self._request(method, endpoint, read=read, **kwargs)
        return self._parse(response, endpoint)

    def _parse(self, response: httpx.Response, endpoint: str) -> Any:
        """The answer's JSON, nested at most :data:`~osw_studio.core.limits.JSON_DEPTH` levels."""
        try:
            return limits.loads_bounded(response.content, where="the guest server's answer")
        except limits.LimitExceeded as exc:
            raise GuestError(str(exc), where=f"{self.base_url}{endpoint}") from None
        except ValueError:
            raise GuestError(
                f"the guest server answered something that is not JSON: {response.text[:200]!r}",
                where=f"{self.base_url}{endpoint}",
                hint="is this URL really a guest server?",
            ) from None

    # --- discovery ---------------------------------------------------------------------------------

    async def capabilities(self) -> Capabilities | None:
        """Our server's capabilities, or ``None`` on an OSWorld guest (which answers 404)."""
        response = await self._request(
            "GET", "/capabilities", read=True, ok=(200, 404), cap=limits.GUEST_JSON_BYTES
        )
        if response.status_code == 404:
            return None
        return Capabilities.model_validate(self._parse(response, "/capabilities"))

    async def platform(self) -> str:
        """The guest's OS name as Python's ``platform.system()`` gives it (``Linux``)."""
        response = await self._request("GET", "/platform", read=True)
        return response.text.strip().strip('"')

    async def screen_size(self) -> tuple[int, int]:
        """``(width, height)`` of the guest screen."""
        data = await self._json("POST", "/screen_size", read=True)
        return int(data["width"]), int(data["height"])

    async def window_size(self, app_class_name: str) -> tuple[int, int] | None:
        """The size of the first window of an application class, or ``None`` if there is none.

        Our guest answers 404 when no window has the class, OSWorld's a bare 500 (its route returns
        nothing); both mean None at once, with no retries.
        """
        response = await self._request(
            "POST", "/window_size", read=True, ok=(200, 404, 500), data={"app_class_name": app_class_name}
        )
        try:
            data = (
                limits.loads_bounded(response.content, where="/window_size")
                if response.status_code == 200
                else None
            )
        except ValueError:
            data = None
        if not data or data.get("width") is None:
            return None
        return int(data["width"]), int(data["height"])

    async def desktop_path(self) -> str:
        """The guest user's desktop folder."""
        data = await self._json("POST", "/desktop_path", read=True)
        return str(data["desktop_path"])

    async def cursor_position(self) -> tuple[int, int]:
        """Where the mouse pointer is, in screen pixels."""
        data = await self._json("GET", "/cursor_position", read=True)
        return int(data[0]), int(data[1])

    async def terminal_output(self) -> str | None:
        """The text of the focused terminal, or ``None`` when there is none."""
        data = await self._json("GET", "/terminal", read=True)
        output = data.get("output") if isinstance(data, dict) else None
        return None if output is None else str(output)

    # --- observation -------------------------------------------------------------------------------

    async def screenshot(
        self, *, format: str = "png", quality: int | None = None, max_width: int | None = None
    ) -> bytes:
        """The screen as encoded image bytes (PNG with the cursor drawn, unless asked otherwise).

        ``format``, ``quality`` and ``max_width`` are our extensions; OSWorld guests ignore them and
        always answer a full-size PNG.
        """
        params: dict[str, str | int] = {}
        if format != "png":
            params["format"] = format
        if quality is not None:
            params["quality"] = quality
        if max_width is not None:
            params["max_width"] = max_width
        response = await self._request(
            "GET", "/screenshot", read=True, params=params, cap=limits.GUEST_SCREENSHOT_BYTES
        )
        where = f"{self.base_url}/screenshot"
        if not response.content:
            raise GuestError(
                "the guest server sent an empty screenshot",
                where=where,
                hint="is the guest's display running?",
            )
        try:  # the pixels the header declares, before anything decodes them
            limits.check_image(response.content, where="the screenshot")
        except limits.LimitExceeded as exc:
            raise GuestError(str(exc), where=where) from None
        except ValueError:
            pass  # no header Pillow knows: whatever decodes the bytes says what is wrong with them
        return response.content

    async def accessibility_tree(self) -> str | None:
        """OSWorld's accessibility XML, or ``None`` when the guest has no AT-SPI (501)."""
        response = await self._request(
            "GET", "/accessibility", read=True, ok=(200, 501), cap=limits.GUEST_JSON_BYTES
        )
        if response.status_code == 501:
            return None
        data = self._parse(response, "/accessibility")
        return str(data["AT"]) if isinstance(data, dict) and "AT" in data else ""

    # --- files -------------------------------------------------------------------------------------

    async def get_file(self, path: str) -> bytes | None:
        """A file's bytes from the guest, or ``None`` if it does not exist (404)."""
        response = await self._request("POST", "/file", read=True, ok=(200, 404), data={"file_path": path})
        return None if response.status_code == 404 else response.content

    async def list_directory(self, path: str) -> dict[str, Any]:
        """OSWorld's directory tree (``name``, ``type``, ``children``) of a guest folder."""
        data = await self._json("POST", "/list_directory", read=True, json={"path": path})
        tree = data.get("directory_tree", data) if isinstance(data, dict) else data
        return dict(tree)

    async def wallpaper(self) -> bytes | None:
        """The desktop wallpaper image, or ``None`` if the guest has none."""
        response = await self._request("POST", "/wallpaper", read=True, ok=(200, 404))
        return None if response.status_code == 404 else response.content

    async def upload(self, data: bytes, path: str) -> None:
        """Write ``data`` to ``path`` in the guest (``/setup/upload``, multipart as OSWorld)."""
        name = path.replace("\\", "/").rsplit("/", 1)[-1] or "file"
        await self._request(
            "POST",
            "/setup/upload",
            read=False,
            wait=max(self.action_timeout, 600.0),
            data={"file_path": path},
            files={"file_data": (name, data)},
        )

    async def download_file(self, url: str, path: str) -> None:
        """Have the guest download ``url`` to ``path`` itself (it may be offline; prefer :meth:`upload`)."""
        await self._request("POST", "/setup/download_file", read=False, json={"url": url, "path": path})

    # --- commands ----------------------------------------------------------------------------------

    async def execute(
        self,
        command: str | list[str],
        *,
        shell: bool = False,
        timeout: float | None = None,  # noqa: ASYNC109 - the guest's limit on the command, sent along
        setup: bool = False,
    ) -> CommandResult:
        """Run a command in the guest and wait for it (``/execute``, or ``/setup/execute``).

        A command that runs and fails comes back as a result with its return code; only a guest that
        cannot run it at all raises.
        """
        body: dict[str, Any] = {"command": command, "shell": shell}
        if timeout is not None:
            body["timeout"] = timeout
        endpoint = "/setup/execute" if setup else "/execute"
        wait = None if timeout is None else max(timeout + 5, self.action_timeout)
        data = await self._json("POST", endpoint, read=False, json=body, wait=wait)
        return CommandResult.model_validate(data)

    async def execute_with_verification(
        self,
        command: str | list[str],
        *,
        shell: bool = False,
        verification: dict[str, Any] | None = None,
        max_wait_time: float = 10,
        check_interval: float = 1,
    ) -> dict[str, Any]:
        """Run a command, then let the guest poll until ``verification`` holds."""
        body = {
            "command": command,
            "shell": shell,
            "verification": verification or {},
            "max_wait_time": max_wait_time,
            "check_interval": check_interval,
        }
        data = await self._json(
            "POST",
            "/setup/execute_with_verification",
            read=False,
            json=body,
            wait=max_wait_time + 10,
        )
        return dict(data)

    async def launch(self, command: str | list[str], *, shell: bool = False) -> int | None:
        """Start a program in the guest without waiting for it; its PID if the guest says (ours does)."""
        response = await self._request(
            "POST", "/setup/launch", read=False, json={"command": command, "shell": shell}
        )
        pid = response.headers.get("x-osw-pid", "")
        return int(pid) if pid.isdigit() and len(pid) < 10 else None

    async def launched_state(self, pids: Sequence[int]) -> dict[int, str] | None:
        """What the programs :meth:`launch` started show: ``{pid: state}`` (see ``guest.launched``).

        ``None`` when the guest cannot tell (OSWorld's server has no such route).
        """
        response = await self._request(
            "POST", "/setup/launched_state", read=True, ok=(200, 404, 405), json={"pids": list(pids)}
        )
        if response.status_code != 200:
            return None
        try:
            states = response.json()["states"]
            return {int(pid): str(states[str(pid)]) for pid in pids}
        except (ValueError, KeyError, TypeError):
            raise GuestError(
                "the guest server's launched_state answer is malformed",
                where=f"{self.base_url}/setup/launched_state",
                hint="is this URL really a guest server?",
            ) from None

    async def open_file(self, path: str) -> None:
        """Open a guest file with its default application."""
        await self._request("POST", "/setup/open_file", read=False, json={"path": path})

    async def activate_window(
        self, window_name: str, *, strict: bool = False, by_class: bool = False
    ) -> bool:
        """Raise and focus a window by title (or class); False if no window matches.

        Our guest says so in its ``x-osw-window`` header (older ones answered 404); OSWorld's answers
        200 either way, so there this is True.
        """
        body = {"window_name": window_name, "strict": strict, "by_class": by_class}
        response = await self._request("POST", "/setup/activate_window", read=False, ok=(200, 404), json=body)
        return _window_found(response)

    async def close_window(self, window_name: str, *, strict: bool = False, by_class: bool = False) -> bool:
        """Close a window by title (or class); False if no window matches (as :meth:`activate_window`)."""
        body = {"window_name": window_name, "strict": strict, "by_class": by_class}
        response = await self._request("POST", "/setup/close_window", read=False, ok=(200, 404), json=body)
        return _window_found(response)

    async def change_wallpaper(self, path: str) -> None:
        """Set the desktop wallpaper to a guest image file."""
        await self._request("POST", "/setup/change_wallpaper", read=False, json={"path": path})

    async def run_python(self, code: str) -> dict[str, Any]:
        """Run Python code in the guest: ``{status, message, output, error}``."""
        return dict(await self._json("POST", "/run_python", read=False, json={"code": code}))

    async def run_bash_script(
        self,
        script: str,
        *,
        timeout: float = 100,  # noqa: ASYNC109 - the guest's limit on the script, sent along
        working_dir: str | None = None,
    ) -> CommandResult:
        """Run a bash script in the guest and wait for it."""
        body = {"script": script, "timeout": timeout, "working_dir": working_dir}
        data = await self._json("POST", "/run_bash_script", read=False, json=body, wait=timeout + 10)
        return CommandResult.model_validate(data)

    async def start_recording(self) -> None:
        """Start recording the screen in the guest."""
        await self._request("POST", "/start_recording", read=False)

    async def end_recording(self) -> bytes:
        """Stop recording and return the video (MP4 bytes)."""
        response = await self._request("POST", "/end_recording", read=False)
        return response.content

    async def input(self, actions: Sequence[Action]) -> int:
        """Perform core actions through ``POST /input`` (our extension); returns how many ran.

        Raises:
            GuestError: If the guest rejects the actions or one fails (naming its index).
        """
        body = {"actions": dump_actions(list(actions))}
        response = await self._request("POST", "/input", read=False, ok=(200, 422, 500), json=body)
        url = f"{self.base_url}/input"
        if response.status_code == 422:
            raise GuestError(
                f"the guest rejected the actions as invalid: {response.text[:300]}",
                where=url,
                hint="the host and guest may run different OSW Studio versions",
            )
        try:
            data = limits.loads_bounded(response.content, where="/input")
        except ValueError:  # a bare 500 from a server that crashed on the actions (its display died)
            data = None
        if response.status_code == 500 or not isinstance(data, dict):
            index = data.get("index") if isinstance(data, dict) else None
            message = (
                data.get("message", response.text[:300]) if isinstance(data, dict) else response.text[:300]
            )
            where = f"{url}: action {index + 1}" if isinstance(index, int) else url
            raise GuestError(f"the guest failed an action: {message}", where=where)
        return int(data.get("executed", len(actions)))


def _window_found(response: httpx.Response) -> bool:
    """Whether a window route found its window (our ``x-osw-window`` header, else the status)."""
    return response.status_code == 200 and response.headers.get("x-osw-window") != "not-found"


def _status_error(response: httpx.Response, url: str) -> GuestError:
    """A readable error for a non-OK answer."""
    status = response.status_code
    body = response.text[:500].strip()
    if status == 401:
        return GuestError(
            "the guest server refused the request: missing or wrong token (HTTP 401)",
            where=url,
            status=status,
            hint="store the token the guest server printed at start (`token=...`) with "
            "`osw-studio keys set --guest URL` (or in Settings > Environment), or set OSW_GUEST_TOKEN",
        )
    if status == 404:
        return GuestError(
            "the guest server has no such endpoint (HTTP 404)",
            where=url,
            status=status,
            hint="the guest server may be an older or different version",
        )
    if status == 501:
        return GuestError(f"the guest cannot do this (HTTP 501): {body}", where=url, status=status)
    if status >= 500:
        return GuestError(
            f"the guest server failed (HTTP {status}): {body or 'no details'}",
            where=url,
            status=status,
            hint="see the guest server's log",
        )
    return GuestError(
        f"the guest server refused the request (HTTP {status}): {body}", where=url, status=status
    )
