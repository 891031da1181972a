"""What every route of the guest server works with: the display and the objects that act on it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import cast

from fastapi import Request

from osw_studio.guest.accessibility import close_worker
from osw_studio.guest.processes import Launcher, Recorder
from osw_studio.guest.screen import EncodedCache, Screen
from osw_studio.guest.wallpaper import Wallpaper
from osw_studio.guest.windows import Windows
from osw_studio.guest.xtest import XTestInput


@dataclass
class GuestContext:
    """The guest's display and the objects that grab, drive and inspect it.

    Screen grabs run on a small pool of their own so each worker keeps its mss object (and X connection)
    across requests.
    """

    display: str
    screen: Screen
    input: XTestInput
    windows: Windows
    launcher: Launcher
    recorder: Recorder
    wallpaper: Wallpaper
    encoded: EncodedCache = field(default_factory=EncodedCache)
    grab_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=3, thread_name_prefix="grab")
    )

    @classmethod
    def open(cls, display: str) -> GuestContext:
        """Connect to ``display``.

        Raises:
            Exception: Whatever Xlib or mss raise when the display cannot be opened.
        """
        screen = Screen(display)
        return cls(
            display=display,
            screen=screen,
            input=XTestInput(display),
            windows=Windows(display),
            launcher=Launcher(),
            recorder=Recorder(display, screen.size),
            wallpaper=Wallpaper(display),
        )

    def close(self) -> None:
        """Stop recording, release the X connections and the grab pool."""
        self.recorder.close()
        close_worker()
        self.wallpaper.close()
        self.input.close()
        self.grab_pool.shutdown(wait=False, cancel_futures=True)


def guest(request: Request) -> GuestContext:
    """The guest context of the app serving ``request``."""
    return cast(GuestContext, request.app.state.guest)
