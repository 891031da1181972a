"""Whether the programs a task's ``launch`` steps started have shown their windows yet.

A launched program is judged by its process tree (the PID ``/setup/launch`` started and every
descendant, so ``sh -c 'mousepad …'`` counts mousepad's window):

- ``window``: a window whose ``_NET_WM_PID`` is in the tree is on screen: ready;
- ``exited``: the tree is gone (the program handed the work to a running instance, or ended): ready;
- ``no-x``: no process of the tree has loaded an X client library for :data:`NO_X_GRACE` seconds (a
  port forwarder such as ``socat``): ready, there is no window to wait for;
- ``waiting``: anything else: an X program still starting.

Examples:
    >>> judge(has_window=False, alive=True, uses_x=True, age=30.0)
    'waiting'
    >>> judge(has_window=False, alive=True, uses_x=False, age=0.5)
    'waiting'
    >>> judge(has_window=False, alive=True, uses_x=False, age=NO_X_GRACE + 1)
    'no-x'
    >>> judge(has_window=True, alive=True, uses_x=True, age=0.1), judge(False, False, False, 0.1)
    ('window', 'exited')
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from osw_studio.guest.processes import Launcher
from osw_studio.guest.windows import Windows

NO_X_GRACE = 3.0
"""Seconds a launched tree may run without loading an X library before it counts as windowless."""

X_LIBRARIES = ("/libX11.so", "/libxcb.so", "/libwayland-client.so")
"""A process that maps one of these talks to a display: it is expected to show a window."""

_PROC = Path("/proc")


def judge(has_window: bool, alive: bool, uses_x: bool, age: float) -> str:
    """The state of one launched tree (see the module's rules)."""
    if has_window:
        return "window"
    if not alive:
        return "exited"
    if not uses_x and age >= NO_X_GRACE:
        return "no-x"
    return "waiting"


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = (_PROC / entry.name / "stat").read_text()
        except OSError:
            continue  # gone while we looked
        # The command name in parentheses may hold spaces and parentheses: the fields follow the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1].isdigit():
            tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def process_tree(pid: int) -> set[int]:
    """``pid`` and its living descendants (``pid`` itself only if it is alive and not a zombie)."""
    children = _children()
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        if current in found:
            continue
        try:
            state = (_PROC / str(current) / "stat").read_text()
        except OSError:
            continue
        if state[state.rfind(")") + 2 : state.rfind(")") + 3] == "Z":
            continue
        found.add(current)
        todo.extend(children.get(current, []))
    return found


def uses_x(pids: set[int]) -> bool:
    """Whether any process in ``pids`` has an X (or Wayland) client library mapped."""
    for pid in pids:
        try:
            with (_PROC / str(pid) / "maps").open(encoding="utf-8", errors="replace") as maps:
                if any(any(lib in line for lib in X_LIBRARIES) for line in maps):
                    return True
        except OSError:
            continue
    return False


def states(pids: list[int], launcher: Launcher, windows: Windows) -> dict[int, str]:
    """The state of each launched PID; a PID this guest did not launch is ``unknown`` (not waited for)."""
    shown = windows.pids()
    answer: dict[int, str] = {}
    for pid in pids:
        started = launcher.started(pid)
        if started is None:
            answer[pid] = "unknown"
            continue
        child, when = started
        child.poll()  # reap it if it ended, so its zombie is not counted alive
        tree = process_tree(pid)
        answer[pid] = judge(bool(tree & shown), bool(tree), uses_x(tree), time.monotonic() - when)
    return answer
