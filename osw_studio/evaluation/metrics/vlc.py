"""VLC metrics: what it plays (its HTTP status), its settings file ``vlcrc``, full screen.

The settings checks read ``vlcrc`` as OSWorld reads it: the last line that contains ``<key>=`` gives
the value, a commented-out default (``#qt-bgcone=1``) included, and a key that never appears has
VLC's default. A missing file (the getter gave None) scores 0, where OSWorld's function crashes.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse
from xml.etree import ElementTree

from osw_studio.evaluation.registry import metric

_FILE_FIELDS = ("filename", "title", "uri", "location", "name")
_URL_FIELDS = (
    ("meta", "url"),
    ("meta", "URI"),
    ("meta", "location"),
    ("meta", "title"),
    ("meta", "filename"),
    ("Stream 0", "Codec"),
    ("Stream 0", "Type"),
    ("Stream 0", "Language"),
)


def _first_info(tree: ElementTree.Element, fields: tuple[tuple[str, str], ...]) -> str | None:
    for category, name in fields:
        element = tree.find(f'information/category[@name="{category}"]/info[@name="{name}"]')
        if element is not None and element.text:
            return element.text
    return None


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _plays_file(info: str, expected: str) -> bool:
    return _basename(info) == expected or info.endswith(expected)


def _plays_url(info: str, expected: str) -> bool:
    if expected in info or info.endswith(expected):
        return True
    wanted = urlparse(expected)
    if info == _basename(wanted.path):
        return True
    if "://" in info:
        actual = urlparse(info)
        return wanted.netloc == actual.netloc and wanted.path in actual.path
    return False


@metric("is_vlc_playing")
def is_vlc_playing(status_path: str | None, rule: dict[str, Any]) -> float:
    """1 when VLC's ``status.xml`` says it plays the file ``rule["file_name"]`` or the stream ``rule["url"]``.

    The file name is matched against the first of the item's ``filename``, ``title``, ``uri``,
    ``location`` and ``name``; a URL against its ``url``, ``URI``, ``location``, ``title``, ``filename``
    or first stream's description (a substring, the same file name, or the same host with the path in it).
    """
    if status_path is None:
        return 0.0
    with open(status_path, "rb") as f:
        tree = ElementTree.fromstring(f.read().decode("utf-8"))
    state = tree.find("state")
    if state is None or state.text != "playing":
        return 0.0
    if rule["type"] == "file_name":
        info = _first_info(tree, tuple(("meta", name) for name in _FILE_FIELDS))
        return float(info is not None and _plays_file(info, rule["file_name"]))
    if rule["type"] == "url":
        info = _first_info(tree, _URL_FIELDS)
        return float(info is not None and _plays_url(info, rule["url"]))
    return 0.0


def _read_vlcrc(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8")


def vlcrc_value(text: str, key: str, default: str) -> str:
    r"""The value of the last line containing ``key`` (or ``key=``), else ``default``.

    >>> vlcrc_value("#qt-bgcone=1\nqt-bgcone=0\n", "qt-bgcone=", "1")
    '0'
    >>> vlcrc_value("[qt]\n", "qt-max-volume=", "125")
    '125'
    """
    value = default
    for line in text.split("\n"):
        if key in line:
            value = line.split("=")[-1].strip()
    return value


def _expected(rule: dict[str, Any], name: str) -> Any:
    value = rule[name]
    return str(value) if isinstance(value, int) else value


def _setting_is(path: str | None, key: str, default: str, expected: Any) -> float:
    if path is None:
        return 0.0
    return float(vlcrc_value(_read_vlcrc(path), key, default) == expected)


@metric("check_qt_bgcone")
def check_qt_bgcone(path: str | None, rule: dict[str, Any]) -> float:
    """``qt-bgcone`` (the cone shown when nothing plays; default 1) is ``expected_qt_bgcone``."""
    return _setting_is(path, "qt-bgcone=", "1", _expected(rule, "expected_qt_bgcone"))


@metric("check_qt_max_volume")
def check_qt_max_volume(path: str | None, rule: dict[str, Any]) -> float:
    """``qt-max-volume`` (default 125) is ``expected_qt_max_volume``."""
    return _setting_is(path, "qt-max-volume=", "125", _expected(rule, "expected_qt_max_volume"))


@metric("check_qt_minimal_view")
def check_qt_minimal_view(path: str | None, rule: dict[str, Any]) -> float:
    """``qt-minimal-view`` (default 0) is ``expected_qt_minimal_view``."""
    return _setting_is(path, "qt-minimal-view=", "0", _expected(rule, "expected_qt_minimal_view"))


@metric("check_one_instance_when_started_from_file")
def check_one_instance_when_started_from_file(path: str | None, rule: dict[str, Any]) -> float:
    """``one-instance-when-started-from-file`` (default 1) is the expected value."""
    expected = _expected(rule, "expected_one_instance_when_started_from_file")
    return _setting_is(path, "one-instance-when-started-from-file=", "1", expected)


@metric("check_play_and_exit")
def check_play_and_exit(path: str | None, rule: dict[str, Any]) -> float:
    """``play-and-exit`` (quit when the playlist ends; default 0) is ``expected_play_and_exit``."""
    return _setting_is(path, "play-and-exit=", "0", _expected(rule, "expected_play_and_exit"))


@metric("check_global_key_play_pause")
def check_global_key_play_pause(path: str | None, rule: dict[str, Any]) -> float:
    """Whether a global play/pause hot key is set (``"1"``) or not (``"0"``), as expected."""
    if path is None:
        return 0.0
    state = "0"
    for line in _read_vlcrc(path).split("\n"):
        if "global-key-play-pause=" in line:
            state = "0" if line.split("=")[-1].strip() == "" else "1"
    return float(state == _expected(rule, "expected_global_key_play_pause"))


_SLIDER_DEFAULT = "153;210;153;20;210;20;255;199;15;245;39;29"


@metric("check_qt_slider_colours")
def check_qt_slider_colours(path: str | None, rule: dict[str, Any]) -> float:
    """The volume slider's colours equal ``expected_qt_slider_colours`` (``match``) or are all dark.

    ``blackish``: every RGB triple of ``qt-slider-colours`` has all channels below 100. A malformed
    list scores 0.
    """
    if path is None:
        return 0.0
    colours = vlcrc_value(_read_vlcrc(path), "qt-slider-colours", _SLIDER_DEFAULT)
    if rule["type"] == "match":
        return float(colours == rule["expected_qt_slider_colours"])
    if rule["type"] == "blackish":
        try:
            values = [int(x) for x in colours.split(";")]
        except ValueError:
            return 0.0
        triples = zip(values[0::3], values[1::3], values[2::3], strict=False)
        return float(all(channel < 100 for triple in triples for channel in triple))
    return 0.0


@metric("is_vlc_recordings_folder")
def is_vlc_recordings_folder(path: str | None, rule: dict[str, Any]) -> float:
    """The first uncommented ``input-record-path`` line names ``rule["recording_file_path"]``."""
    if path is None:
        return 0.0
    for line in _read_vlcrc(path).split("\n"):
        if line.startswith("#") or not line.strip():
            continue
        if "input-record-path" in line:
            return float(line.split("=")[-1].strip() == rule["recording_file_path"])
    return 0.0


@metric("is_vlc_fullscreen")
def is_vlc_fullscreen(window_size: dict[str, int] | None, screen_size: dict[str, int] | None = None) -> float:
    """1 when VLC's window is exactly the screen's size."""
    if window_size is None or screen_size is None:
        return 0.0
    return float(
        window_size["width"] == screen_size["width"] and window_size["height"] == screen_size["height"]
    )
