"""Model requests in a run store: recorded once, compactly, and read back exactly as they were sent.

A step's :class:`~osw_studio.core.step.StepRequest` arrives from the model client with its images as
``data:`` URLs, and most of it repeats the step before (the system prompt, the history turns and their
screenshots). The writer's :class:`RequestCompactor` stores it without repeating anything:

- an image part becomes ``{"type": "image_ref", "file", "step", "width", "height", "mime", "sha256",
  "bytes"}``: ``file`` (under ``screens/``) holds exactly the bytes sent. When the screenshot went out as
  grabbed that is the step's own screenshot; when it was resized or re-encoded the bytes sent are saved
  once beside it (``step_0003.sent.jpg``, with ``of`` naming the screenshot it was made from). An image
  sent again in a later step's history refers to the same file;
- a message that an earlier step already sent is ``{"same_as": [step, position]}``.

The reader's :class:`RequestExpander` resolves both, and :func:`openai_messages` turns image references
back into ``image_url`` parts with any URL an export wants (a data URL rebuilt from the bytes sent is
the very string the model received).

Examples:
    >>> saved = {}
    >>> c = RequestCompactor(lambda name, data: saved.setdefault(name, data) and name)
    >>> png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000002000000010802000000")
    >>> url = "data:image/png;base64," + base64.b64encode(png).decode()
    >>> sent = StepRequest(messages=[{"role": "system", "content": "Be brief."},
    ...                              {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}])
    >>> first = c.compact(sent, 1, "step_0001.png", png)
    >>> first.messages[1]["content"][0]["file"], first.messages[1]["content"][0]["width"]
    ('step_0001.png', 2)
    >>> c.compact(sent, 2, "step_0002.png", b"other").messages
    [{'same_as': [1, 0]}, {'same_as': [1, 1]}]
"""  # noqa: E501

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from osw_studio.core.errors import StoreError
from osw_studio.core.step import StepRecord, StepRequest
from osw_studio.trajectory.layout import image_ext, image_size

IMAGE_REF = "image_ref"
"""The ``type`` of a content part that stands for an image sent."""

SaveFile = Callable[[str, bytes], str]
"""Saves bytes under ``screens/`` with the given name and returns the name saved."""


def is_data_url(url: object) -> bool:
    """Whether ``url`` is a base64 ``data:`` URL.

    >>> is_data_url("data:image/png;base64,AAAA"), is_data_url("https://x/y.png")
    (True, False)
    """
    return isinstance(url, str) and url.startswith("data:") and ";base64," in url[:100]


def decode_data_url(url: str) -> tuple[str, bytes]:
    r"""``(mime, bytes)`` of a base64 ``data:`` URL.

    >>> decode_data_url("data:image/jpeg;base64,/9g=")
    ('image/jpeg', b'\xff\xd8')

    Raises:
        ValueError: If the payload is not base64.
    """
    head, _, payload = url.partition(",")
    mime = head[5:].split(";", 1)[0] or "application/octet-stream"
    try:
        return mime, base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"not base64: {exc}") from None


def prompt_sha256(messages: Iterable[Mapping[str, Any]]) -> str:
    r"""SHA-256 of the prompt: the text of the messages up to and including the first user turn.

    >>> prompt_sha256([{"role": "user", "content": "hi"}]) == hashlib.sha256(b"user\nhi").hexdigest()
    True
    """
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        texts = (
            [content]
            if isinstance(content, str)
            else [
                p.get("text", "") for p in content or [] if isinstance(p, Mapping) and p.get("type") == "text"
            ]
        )
        parts.append(f"{message.get('role')}\n" + "\n".join(t for t in texts if isinstance(t, str)))
        if message.get("role") == "user":
            break
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


RESPONSES_IMAGES = ("input_image", "computer_screenshot")
"""The image parts of OpenAI's Responses API: ``{"type", "image_url": "data:...", "detail"}``. A reference
to one keeps the part's other keys in ``sent_as``; a ``computer_call_output``'s screenshot is its
``output`` (position ``-1`` below)."""


def _is_anthropic_image(part: Any) -> bool:
    """An image block of the Messages API: ``{"type": "image", "source": {"type": "base64", ...}}``."""
    source = part.get("source") if isinstance(part, Mapping) else None
    return (
        isinstance(part, Mapping)
        and part.get("type") == "image"
        and isinstance(source, Mapping)
        and source.get("type") == "base64"
        and isinstance(source.get("data"), str)
    )


def _is_image(part: Any) -> bool:
    return isinstance(part, Mapping) and (
        part.get("type") == "image_url"
        or (part.get("type") in RESPONSES_IMAGES and is_data_url(part.get("image_url")))
        or _is_anthropic_image(part)
    )


def _last_image(messages: list[dict[str, Any]]) -> tuple[int, int] | None:
    for m in range(len(messages) - 1, -1, -1):
        content = messages[m].get("content")
        if isinstance(content, list):
            for p in range(len(content) - 1, -1, -1):
                if _is_image(content[p]):
                    return (m, p)
        elif _is_image(messages[m].get("output")):
            return (m, -1)
    return None


class RequestCompactor:
    """Turns requests as sent into their run store form, one step after the other (see the module docs).

    Args:
        save: Saves the bytes of an image sent that no stored screenshot holds.
    """

    def __init__(self, save: SaveFile) -> None:
        self._save = save
        self._images: dict[str, dict[str, Any]] = {}  # sha256 of the bytes sent -> its reference
        self._messages: dict[str, list[int]] = {}  # a compact message, as JSON -> [step, position]

    def compact(
        self, request: StepRequest, step: int, screen_name: str | None, screen: bytes | None
    ) -> StepRequest:
        """The run store form of the request of step ``step``, whose screenshot is ``screen_name``.

        The request's last image is taken for the step's own screen (every agent sends the current
        screenshot last); any other image never stored before is saved on its own.
        """
        messages = list(request.messages)
        screen_sha = hashlib.sha256(screen).hexdigest() if screen else None
        current = _last_image(messages)
        out: list[dict[str, Any]] = []
        for pos, message in enumerate(messages):
            content = message.get("content")
            if isinstance(content, list):
                parts = [
                    self._part(part, step, screen_name, screen_sha, current == (pos, i))
                    if not _is_tool_result(part)
                    else {
                        **part,
                        "content": [
                            self._part(p, step, screen_name, screen_sha, False) for p in part["content"]
                        ],
                    }
                    for i, part in enumerate(content)
                ]
                message = {**message, "content": parts}
            elif _is_image(message.get("output")):
                output = self._part(message["output"], step, screen_name, screen_sha, current == (pos, -1))
                message = {**message, "output": output}
            key = json.dumps(message, sort_keys=True, ensure_ascii=False)
            earlier = self._messages.get(key)
            if earlier is not None:
                out.append({"same_as": list(earlier)})
            else:
                self._messages[key] = [step, pos]
                out.append(message)
        return StepRequest(
            messages=out,
            params=dict(request.params),
            prompt_source=request.prompt_source,
            prompt_sha256=request.prompt_sha256 or prompt_sha256(messages),
        )

    def _part(
        self, part: Any, step: int, screen_name: str | None, screen_sha: str | None, is_current: bool
    ) -> Any:
        if not _is_image(part):
            return part
        if _is_anthropic_image(part):  # kept with the block's other keys (cache_control) in sent_as
            source = part["source"]
            url: Any = f"data:{source.get('media_type', 'image/png')};base64,{source['data']}"
            sent = {**part, "source": {k: v for k, v in source.items() if k != "data"}}
            found = self._ref(url, step, screen_name, screen_sha, is_current)
            return part if found is None else {**found, "sent_as": sent}
        image_url = part.get("image_url")
        responses_shape = part.get("type") in RESPONSES_IMAGES
        url = (
            image_url if responses_shape else image_url.get("url") if isinstance(image_url, Mapping) else None
        )
        ref = self._ref(url, step, screen_name, screen_sha, is_current)
        if ref is None:
            return part  # an http(s) URL is its own reference
        if responses_shape:
            return {**ref, "sent_as": {k: v for k, v in part.items() if k != "image_url"}}
        assert isinstance(image_url, Mapping)
        extra = {k: v for k, v in image_url.items() if k != "url"}
        return {**ref, "image_url": extra} if extra else dict(ref)

    def _ref(
        self, url: Any, step: int, screen_name: str | None, screen_sha: str | None, is_current: bool
    ) -> dict[str, Any] | None:
        """The reference of a data URL's image (saved when no stored screen holds it), or None."""
        if not is_data_url(url):
            return None
        assert isinstance(url, str)
        try:
            mime, data = decode_data_url(url)
        except ValueError:
            return None
        sha = hashlib.sha256(data).hexdigest()
        ref = self._images.get(sha)
        if ref is None:
            ext = image_ext(mime.rpartition("/")[2] or "png")
            of: str | None = None
            if screen_name is not None and sha == screen_sha:
                name = screen_name
            elif screen_name is not None and is_current:
                of = screen_name
                name = self._save(f"{screen_name.rpartition('.')[0]}.sent.{ext}", data)
            else:
                name = self._save(f"sent_{sha[:16]}.{ext}", data)
            width, height = image_size(data[:65536]) or (None, None)
            ref = {
                "type": IMAGE_REF,
                "file": name,
                "step": step,
                "width": width,
                "height": height,
                "mime": mime,
                "sha256": sha,
                "bytes": len(data),
            }
            if of is not None:
                ref["of"] = of
            self._images[sha] = ref
        return ref


def _is_tool_result(part: Any) -> bool:
    return (
        isinstance(part, Mapping)
        and part.get("type") == "tool_result"
        and isinstance(part.get("content"), list)
    )


def anthropic_messages(
    messages: Iterable[Mapping[str, Any]], data: Callable[[Mapping[str, Any]], str]
) -> list[dict[str, Any]]:
    """Messages API ``messages`` as sent, each image reference its block again (``data`` its base64).

    >>> ref = {"type": "image_ref", "file": "s.png", "sent_as": {"type": "image", "source": {"type": "base64"}}}
    >>> anthropic_messages([{"role": "user", "content": [ref]}], lambda r: "QUJD")
    [{'role': 'user', 'content': [{'type': 'image', 'source': {'type': 'base64', 'data': 'QUJD'}}]}]
    """  # noqa: E501

    def part(value: Any) -> Any:
        if isinstance(value, Mapping) and value.get("type") == IMAGE_REF and "sent_as" in value:
            sent = dict(value["sent_as"])
            return {**sent, "source": {**sent.get("source", {}), "data": data(value)}}
        if _is_tool_result(value):
            return {**value, "content": [part(p) for p in value["content"]]}
        return value

    out = []
    for message in messages:
        content = message.get("content")
        out.append(
            {**message, "content": [part(p) for p in content] if isinstance(content, list) else content}
        )
    return out


class RequestExpander:
    """Reads the compact requests of one run back, step after step (every step, in order)."""

    def __init__(self) -> None:
        self._messages: dict[tuple[int, int], dict[str, Any]] = {}

    def messages(self, step: StepRecord) -> list[dict[str, Any]] | None:
        """The messages of ``step``'s request with every ``same_as`` resolved (images still references).

        Raises:
            StoreError: If a message refers to one no earlier step recorded.
        """
        if step.request is None:
            return None
        out = []
        for pos, message in enumerate(step.request.messages):
            same = message.get("same_as")
            if same is not None and len(message) == 1:
                found = (
                    self._messages.get((int(same[0]), int(same[1])))
                    if isinstance(same, list) and len(same) == 2
                    else None
                )
                if found is None:
                    raise StoreError(
                        f"step {step.index}'s request refers to message {same!r}, which no earlier step "
                        "recorded",
                        hint="the run store was edited or damaged; export with --reprompt PROFILE",
                    )
                message = found
            else:
                self._messages[(step.index, pos)] = message
            out.append(message)
        return out


def image_refs(messages: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The image references of messages (and of Responses API tool outputs), in order."""
    out: list[Mapping[str, Any]] = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            out.extend(
                part
                for part in content
                if (type(part) is dict or isinstance(part, Mapping)) and part.get("type") == IMAGE_REF
            )
        elif isinstance(m.get("output"), Mapping) and m["output"].get("type") == IMAGE_REF:
            out.append(m["output"])
    return out


def responses_input(
    items: Iterable[Mapping[str, Any]], url: Callable[[Mapping[str, Any]], str]
) -> list[dict[str, Any]]:
    """Responses API ``input`` items as sent, with each image reference its part again (``url`` its URL).

    >>> ref = {"type": "image_ref", "file": "step_0002.png", "sent_as": {"type": "computer_screenshot"}}
    >>> responses_input([{"type": "computer_call_output", "call_id": "c", "output": ref}], lambda r: r["file"])
    [{'type': 'computer_call_output', 'call_id': 'c', 'output': {'type': 'computer_screenshot', 'image_url': 'step_0002.png'}}]
    """  # noqa: E501

    def part(value: Any) -> Any:
        if isinstance(value, Mapping) and value.get("type") == IMAGE_REF and "sent_as" in value:
            return {**value["sent_as"], "image_url": url(value)}
        return value

    out = []
    for item in items:
        item = dict(item)
        if isinstance(item.get("content"), list):
            item["content"] = [part(p) for p in item["content"]]
        if "output" in item:
            item["output"] = part(item["output"])
        out.append(item)
    return out


def openai_messages(
    messages: Iterable[Mapping[str, Any]], url: Callable[[Mapping[str, Any]], str]
) -> list[dict[str, Any]]:
    """The messages as sent, with each image reference an ``image_url`` part whose URL ``url`` gives.

    >>> ref = {"type": "image_ref", "file": "step_0001.png", "image_url": {"detail": "high"}}
    >>> openai_messages([{"role": "user", "content": [ref]}], lambda r: r["file"])
    [{'role': 'user', 'content': [{'type': 'image_url', 'image_url': {'url': 'step_0001.png', 'detail': 'high'}}]}]
    """  # noqa: E501
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = [
                {"type": "image_url", "image_url": {"url": url(p), **(p.get("image_url") or {})}}
                if (type(p) is dict or isinstance(p, Mapping)) and p.get("type") == IMAGE_REF
                else p
                for p in content
            ]
        out.append({**message, "content": content})
    return out
