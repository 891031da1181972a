"""``osw-studio actions``: parse a model reply into actions, or write actions in an action language."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from osw_studio.actions.coords import COORD_MODES
from osw_studio.core.action_languages import PARSED, language
from osw_studio.core.errors import ActionParseError
from osw_studio.core.exit_codes import ExitCode

_FORMATS = PARSED
_MODES = COORD_MODES  # every frame the parsers know (rel999: OSWorld's Qwen3-VL agent)


def register(subparsers: Any) -> None:
    """Add ``actions parse`` and ``actions render``."""
    actions = subparsers.add_parser("actions", help="parse model replies into actions, and back")
    sub = actions.add_subparsers(dest="actions_command", metavar="ACTION", required=True)

    parse = sub.add_parser(
        "parse",
        help="read one reply on stdin, print its actions as JSON",
        description="Read one model reply on stdin and print its actions as a JSON list in screen "
        "pixels. On a parse error, print it on stderr and exit 1.",
    )
    parse.add_argument("--format", required=True, choices=_FORMATS, help="the reply's action language")
    parse.add_argument("--thought", action="store_true", help='print {"thought": ..., "actions": [...]}')
    _space_arguments(parse)
    parse.set_defaults(handler=_parse)

    render = sub.add_parser(
        "render",
        help="read a JSON list of actions on stdin, print them in an action language",
        description="Read a JSON list of actions (screen pixels, as `actions parse` prints) on stdin "
        "and write them as pyautogui code, computer_13 JSON or UI-TARS text.",
    )
    render.add_argument("--to", required=True, choices=_FORMATS, help="the action language to write")
    render.add_argument("--thought-text", metavar="TEXT", help="the Thought: line (uitars only)")
    _space_arguments(render)
    render.set_defaults(handler=_render)


def _space_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--screen", default="1920x1080", metavar="WxH", help="guest screen size")
    parser.add_argument("--image", metavar="WxH", help="size of the screenshot the model saw")
    parser.add_argument(
        "--coords",
        choices=_MODES,
        help="frame of the model's numbers (default: abs; smart for uitars)",
    )
    parser.add_argument("--min-pixels", type=int, help="smart-resize lower area bound")
    parser.add_argument("--max-pixels", type=int, help="smart-resize upper area bound")


def _size(text: str, option: str) -> tuple[int, int]:
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit() or int(width) <= 0 or int(height) <= 0:
        raise ActionParseError(f"{option} must look like 1920x1080, got {text!r}")
    return (int(width), int(height))


def _space(args: argparse.Namespace, fmt: str) -> Any:
    from pydantic import ValidationError

    from osw_studio.actions import CoordinateSpace

    mode = args.coords or language(fmt).coords
    options: dict[str, Any] = {"screen": _size(args.screen, "--screen"), "mode": mode}
    if args.image:
        options["image"] = _size(args.image, "--image")
    if args.min_pixels:
        options["min_pixels"] = args.min_pixels
    if args.max_pixels:
        options["max_pixels"] = args.max_pixels
    try:
        return CoordinateSpace(**options)
    except ValidationError as exc:
        raise ActionParseError(
            str(exc.errors()[0]["msg"]), hint="check --coords, --image and --screen"
        ) from None


def _parse(args: argparse.Namespace) -> int:
    from osw_studio.actions import parse_reply
    from osw_studio.core.actions import dump_actions

    try:
        space = _space(args, args.format)
        thought, actions = parse_reply(sys.stdin.read(), args.format, space)
    except ActionParseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.FAILED
    data: Any = dump_actions(actions)
    if args.thought:
        data = {"thought": thought, "actions": data}
    print(json.dumps(data, ensure_ascii=False))
    return ExitCode.OK


def _render(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from osw_studio.actions import render
    from osw_studio.core.actions import parse_actions

    try:
        space = _space(args, args.to)
        text = sys.stdin.read()
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ActionParseError(f"stdin is not JSON: {exc.msg}", where=f"line {exc.lineno}") from None
        if isinstance(data, dict):
            data = data.get("actions", [data]) if "actions" in data else [data]
        try:
            actions = parse_actions(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
            raise ActionParseError(error["msg"], where=path) from None
        print(render(args.to, actions, space, thought=args.thought_text))
    except ActionParseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.FAILED
    return ExitCode.OK
