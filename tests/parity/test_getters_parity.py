"""Differential cases for the getters: ours and OSWorld's against the same real guest server.

The guest is our server on a private Xvfb, started with ``--no-token`` because OSWorld's host code
sends none; it binds 127.0.0.1. OSWorld's getters run in the reference worker with an ``env`` that
has what they read (``vm_ip``, ``server_port``, ``cache_dir`` and its ``PythonController``), each
side with its own cache folder; values must be equal, files byte for byte.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from osw_studio.envs.guest_client import GuestClient
from osw_studio.evaluation.getters.files import FileMissing
from osw_studio.evaluation.registry import GETTERS, GetterContext
from osw_studio.tasks.hostfetch import FetchPolicy
from tests.fakes.desktop import start_guest, start_xvfb, stop, wait_ready
from tests.parity.reference import Reference

pytestmark = pytest.mark.xvfb


class Guest:
    def __init__(self, url: str, home: Path) -> None:
        self.url = url
        self.home = home
        self.port = int(url.rsplit(":", 1)[1].rstrip("/"))


@pytest.fixture(scope="module")
def guest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guest]:
    home = tmp_path_factory.mktemp("getter-guest")
    xvfb, display = start_xvfb((1280, 800))
    processes = [xvfb]
    try:
        env = {**os.environ, "DISPLAY": display, "HOME": str(home), "LANG": "C.UTF-8"}
        server = start_guest(display, home / "ready", "--no-token", env=env)
        processes.append(server)
        url, _ = wait_ready(server, home / "ready")
        (home / "report.txt").write_text("total 42\n", encoding="utf-8")
        (home / "data").mkdir()
        (home / "data" / "a.csv").write_bytes(b"a,b\n1,2\n")
        (home / "data" / "b.bin").write_bytes(bytes(range(256)))
        (home / ".config" / "vlc").mkdir(parents=True)
        (home / ".config" / "vlc" / "vlcrc").write_text("[qt]\nqt-privacy-ask=0\n", encoding="utf-8")
        (home / ".config" / "GIMP" / "2.10").mkdir(parents=True)
        (home / ".config" / "GIMP" / "2.10" / "gimprc").write_text('(theme "Light")\n', encoding="utf-8")
        import openpyxl

        book = openpyxl.Workbook()
        for row in [["Name", "Qty", "Price"], ["Apple", 3, 1.25], ["Banana", 12, 0.5]]:
            book.active.append(row)
        book.save(home / "data" / "sheet.xlsx")
        yield Guest(url, home)
    finally:
        for process in reversed(processes):
            stop(process)


ENV = """
class Env:
    vm_ip = "127.0.0.1"
    vm_platform = "Linux"
    vm_machine = "x86_64"  # upstream getters read the guest's architecture
    server_port = {port}
    cache_dir = {cache!r}
    controller = load("desktop_env.controllers.python").PythonController("127.0.0.1", {port})
"""

THEIRS = {
    "vm_command_line": ("desktop_env.evaluators.getters.general", "get_vm_command_line"),
    "vm_command_error": ("desktop_env.evaluators.getters.general", "get_vm_command_error"),
    "vm_file": ("desktop_env.evaluators.getters.file", "get_vm_file"),
    "cache_file": ("desktop_env.evaluators.getters.file", "get_cache_file"),
    "vm_screen_size": ("desktop_env.evaluators.getters.info", "get_vm_screen_size"),
    "rule": ("desktop_env.evaluators.getters.misc", "get_rule"),
    "cloud_file": ("desktop_env.evaluators.getters.file", "get_cloud_file"),
    "content_from_vm_file": ("desktop_env.evaluators.getters.file", "get_content_from_vm_file"),
    "list_directory": ("desktop_env.evaluators.getters.info", "get_list_directory"),
    "vm_terminal_output": ("desktop_env.evaluators.getters.general", "get_vm_terminal_output"),
    "vlc_config": ("desktop_env.evaluators.getters.vlc", "get_vlc_config"),
    "gimp_config_file": ("desktop_env.evaluators.getters.gimp", "get_gimp_config_file"),
}


def theirs(reference: Reference, guest: Guest, cache: Path, kind: str, spec: dict[str, Any]) -> Any:
    module, func = THEIRS[kind]
    code = ENV.format(port=guest.port, cache=str(cache)) + f"result = m0.{func}(Env(), {spec!r})"
    return reference.exec(code, modules=(module,))


async def ours(guest: Guest, cache: Path, kind: str, spec: dict[str, Any]) -> Any:
    async with GuestClient(guest.url) as client:
        # The test's file server is on 127.0.0.1: allowed by name, as a user allows a mirror.
        policy = FetchPolicy.of(["127.0.0.1"])
        ctx = GetterContext(guest=client, cache_dir=cache, task_dir=cache, fetch_policy=policy)
        return await GETTERS.get(kind)(ctx, dict(spec))


def _same_files(a: Any, b: Any, ours_dir: Path, theirs_dir: Path) -> None:
    """Paths must name the same file in each side's cache, with the same bytes."""
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same_files(x, y, ours_dir, theirs_dir)
        return
    if a is None or b is None:
        assert a is None and b is None
        return
    assert Path(a).relative_to(ours_dir) == Path(b).relative_to(theirs_dir)
    assert Path(a).read_bytes() == Path(b).read_bytes()


CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("stdout", "vm_command_line", {"command": "echo hello; echo oops >&2", "shell": True}),
    ("stdout-list", "vm_command_line", {"command": ["printf", "a b\\tc"]}),
    ("stdout-unicode", "vm_command_line", {"command": "printf 'Zürich €'", "shell": True}),
    ("stdout-failing", "vm_command_line", {"command": "echo partial; exit 3", "shell": True}),
    ("stderr", "vm_command_error", {"command": "echo hello; echo oops >&2", "shell": True}),
    ("stderr-none", "vm_command_error", {"command": ["true"]}),
    ("screen", "vm_screen_size", {}),
    ("rule", "rule", {"rules": {"expected": ["a", 1, None], "nested": {"k": True}}}),
    ("terminal", "vm_terminal_output", {}),
]


@pytest.mark.parametrize(("case", "kind", "spec"), CASES, ids=[c[0] for c in CASES])
async def test_value_getter_agrees(
    metric_reference: Reference, guest: Guest, tmp_path: Path, case: str, kind: str, spec: dict[str, Any]
) -> None:
    a = await ours(guest, tmp_path / "ours", kind, spec)
    b = theirs(metric_reference, guest, tmp_path / "theirs", kind, spec)
    assert a == b


def _file_cases(home: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("single", {"path": f"{home}/report.txt", "dest": "report.txt"}),
        ("binary", {"path": f"{home}/data/b.bin", "dest": "b.bin"}),
        (
            "multi-gives",
            {
                "multi": True,
                "path": [f"{home}/report.txt", f"{home}/data/a.csv", f"{home}/data/b.bin"],
                "dest": ["r.txt", "a.csv", "b.bin"],
                "gives": [0, 2],
            },
        ),
        (
            "multi-missing",
            {
                "multi": True,
                "path": [f"{home}/report.txt", f"{home}/absent.txt"],
                "dest": ["r.txt", "absent.txt"],
                "gives": [0, 1],
            },
        ),
    ]


@pytest.mark.parametrize("case", ["single", "binary", "multi-gives", "multi-missing"])
async def test_vm_file_agrees(metric_reference: Reference, guest: Guest, tmp_path: Path, case: str) -> None:
    spec = dict(_file_cases(str(guest.home)))[case]
    ours_dir, theirs_dir = tmp_path / "ours", tmp_path / "theirs"
    ours_dir.mkdir()
    theirs_dir.mkdir()
    a = await ours(guest, ours_dir, "vm_file", spec)
    b = theirs(metric_reference, guest, theirs_dir, "vm_file", spec)
    _same_files(a, b, ours_dir, theirs_dir)


async def test_a_missing_single_vm_file_scores_0_on_both(
    metric_reference: Reference, guest: Guest, tmp_path: Path
) -> None:
    spec = {"path": f"{guest.home}/absent.txt", "dest": "absent.txt"}
    (tmp_path / "theirs").mkdir()
    # OSWorld's getter gives None and its metric then scores the task 0; ours says which file is missing
    # and scores the metric 0 (evaluate turns FileMissing into a 0 with that reason).
    assert theirs(metric_reference, guest, tmp_path / "theirs", "vm_file", spec) is None
    with pytest.raises(FileMissing, match=r"absent\.txt"):
        await ours(guest, tmp_path / "ours", "vm_file", spec)


async def test_cache_file_agrees(metric_reference: Reference, guest: Guest, tmp_path: Path) -> None:
    for side in ("ours", "theirs"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "out.txt").write_text("from a setup step\n", encoding="utf-8")
    a = await ours(guest, tmp_path / "ours", "cache_file", {"path": "out.txt"})
    b = theirs(metric_reference, guest, tmp_path / "theirs", "cache_file", {"path": "out.txt"})
    _same_files(a, b, tmp_path / "ours", tmp_path / "theirs")


def test_the_getters_compared_here_are_listed_as_differential_tested() -> None:
    from osw_studio.evaluation.parity import DIFFERENTIAL_TESTED

    listed = {n.split(" ", 1)[1] for n in DIFFERENTIAL_TESTED if n.startswith("getter ")}
    # Every getter compared here is listed; the others listed are compared in the coverage tests
    # (tests/parity/test_coverage_*.py; test_metrics_suite checks each has a differential test).
    assert set(THEIRS) <= listed


@pytest.mark.parametrize(
    ("kind", "spec"),
    [
        ("list_directory", {"path": "{home}/data"}),
        (
            "content_from_vm_file",
            {"path": "{home}/data/sheet.xlsx", "file_type": "xlsx", "file_content": "last_row"},
        ),
    ],
    ids=["list_directory", "content_from_vm_file"],
)
async def test_guest_value_getter_agrees(
    metric_reference: Reference, guest: Guest, tmp_path: Path, kind: str, spec: dict[str, Any]
) -> None:
    spec = {k: v.format(home=guest.home) if isinstance(v, str) else v for k, v in spec.items()}
    for side in ("ours", "theirs"):
        (tmp_path / side).mkdir()
    a = await ours(guest, tmp_path / "ours", kind, spec)
    b = theirs(metric_reference, guest, tmp_path / "theirs", kind, spec)
    assert a == b


@pytest.mark.parametrize(
    ("kind", "spec"),
    [("vlc_config", {"dest": "vlcrc"}), ("gimp_config_file", {"file_name": "gimprc", "dest": "gimprc"})],
    ids=["vlc_config", "gimp_config_file"],
)
async def test_app_config_getter_agrees(
    metric_reference: Reference, guest: Guest, tmp_path: Path, kind: str, spec: dict[str, Any]
) -> None:
    ours_dir, theirs_dir = tmp_path / "ours", tmp_path / "theirs"
    ours_dir.mkdir()
    theirs_dir.mkdir()
    a = await ours(guest, ours_dir, kind, spec)
    b = theirs(metric_reference, guest, theirs_dir, kind, spec)
    _same_files(a, b, ours_dir, theirs_dir)


class _Files(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"gold,file\n1,2\n" if self.path == "/gold.csv" else b""
        self.send_response(200 if body else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


async def test_cloud_file_agrees(metric_reference: Reference, guest: Guest, tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/gold.csv"
        spec = {"multi": True, "path": [url, url], "dest": ["gold.csv", "again.csv"], "gives": [0, 1]}
        ours_dir, theirs_dir = tmp_path / "ours", tmp_path / "theirs"
        ours_dir.mkdir()
        theirs_dir.mkdir()
        a = await ours(guest, ours_dir, "cloud_file", spec)
        b = theirs(metric_reference, guest, theirs_dir, "cloud_file", spec)
        _same_files(a, b, ours_dir, theirs_dir)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
