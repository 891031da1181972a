"""``sft-messages`` and ``sft-sharegpt``: chat SFT data, one sample per step or per episode.

A sample is the request the model was sent at a step plus its target (:mod:`.samples`): the raw reply
for steps the model decided, a person's correction in the model's own output format otherwise. Both
formats write ``data.jsonl``, one sample a line, with ``source`` (agent, approved, edited, human) and
``prompt`` (recorded, derived, reprompt).

- ``sft-messages``: OpenAI chat fine-tuning's ``{"messages": [...]}``, content parts as they were sent
  (``text`` and ``image_url``). Images are ``data:`` URLs by default (hosted fine-tuning takes only
  http(s) or data URLs), byte for byte the ones the model was sent; ``--images copy`` writes files under
  ``images/<run-id>/`` and relative paths instead.
- ``sft-sharegpt``: LLaMA-Factory's ShareGPT shape (``system``, ``conversations`` of ``human``/``gpt``
  turns with one ``<image>`` where each image was, ``images`` paths), with a ``dataset_info.json`` that
  registers it. Consecutive turns of one role are joined (ShareGPT alternates roles).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from osw_studio.core.errors import ExportError
from osw_studio.trajectory.exporters.base import Exporter, ExportOptions, ExportRun, ImageSink, remember
from osw_studio.trajectory.exporters.chat import ChatBuilder, to_compact
from osw_studio.trajectory.exporters.profiles import get_profile
from osw_studio.trajectory.exporters.replies import Language
from osw_studio.trajectory.exporters.rescale import Rescaler
from osw_studio.trajectory.exporters.samples import Sample, SampleBuilder, run_language
from osw_studio.trajectory.requests import IMAGE_REF, image_refs, openai_messages

DATASET_NAME = "osw_studio"
"""The dataset's name in LLaMA-Factory's ``dataset_info.json``."""


class JsonlExporter(Exporter):
    """An exporter that writes one JSON object a line to ``data.jsonl``."""

    file_name = "data.jsonl"

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.images = ImageSink(self.out, self.image_mode, copier=self.copier)
        self._file: IO[str] = open(  # noqa: SIM115
            self.staged(self.file_name), "w", encoding="utf-8", buffering=1 << 20
        )

    def write(self, record: dict[str, Any]) -> None:
        """Append one line."""
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")

    def write_line(self, text: str) -> None:
        """Append one line already in JSON."""
        self._file.write(text + "\n")

    def close(self) -> None:
        """Close ``data.jsonl``."""
        self._file.close()


class SampleExporter(JsonlExporter):
    """A JSONL format written from samples (request + target)."""

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.samples = SampleBuilder(options)
        self._counted_images: tuple[str, set[str]] = ("", set())
        self._counted_messages: dict[int, dict[str, Any]] = {}
        self.rescaler = Rescaler(options.train_size) if options.train_size else None
        # URLs of the images of the run being written: history turns repeat them sample after sample.
        self._urls: tuple[str, dict[str, str]] = ("", {})
        # The run's prompt messages with their images resolved, and their JSON, by identity: a history
        # turn is one object sample after sample (requests.RequestExpander resolves each `same_as` to
        # the message it names), so it is converted and serialized once. The entry keeps the message
        # itself, so its id is not reused while the run is written.
        self._resolved: tuple[str, dict[int, _Resolved]] = ("", {})

    def image_url(self, run: ExportRun, ref: Mapping[str, Any]) -> str:
        """Where an image reference points in this export (a data URL or a path beside the data).

        Raises:
            ExportError: If the run store lost the image.
        """
        if self._urls[0] != run.run_id:
            self._urls = (run.run_id, {})
        name = str(ref.get("file") or "")
        url = self._urls[1].get(name)
        if url is None:
            url = remember(self._urls[1], name, self._image_url(run, ref))
        return url

    def _image_url(self, run: ExportRun, ref: Mapping[str, Any]) -> str:
        path = run.screen_file(str(ref.get("file") or ""))
        if path is None:
            raise ExportError(
                f"the image {ref.get('file')!r} that the request refers to is missing",
                where=str(run.store.path / "screens"),
                hint="restore the run's screens/ folder, or leave the run out",
            )
        mime = ref.get("mime")
        if self.rescaler is not None:
            path = self.rescaler.image(path, ref, lambda name, data: self._place(run, name, data))
        return self.images.ref(run, path, mime if isinstance(mime, str) else None)

    def _place(self, run: ExportRun, name: str, data: bytes) -> Path:
        dest = self.out / self.images.folder.format(run_id=run.run_id) / name
        self.copier.wait()  # a copy on its way there is made first, as in line
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        return dest

    def language(self, run: ExportRun, sample: Sample) -> Language:
        """The action language of a sample's assistant turns."""
        if sample.origin == "reprompt":
            return get_profile(self.samples.profile_name()).language
        return run_language(run)

    def rescaled(self, run: ExportRun, sample: Sample, text: str) -> str:
        """An assistant text at the training size (as it is without ``--train-size``)."""
        if self.rescaler is None or sample.space is None:
            return text
        return self.rescaler.reply(text, self.language(run, sample), sample.space)

    def count(self, run: ExportRun, sample: Sample) -> None:
        """Count a written sample on the dataset card."""
        self.card.count(sample.source, origin=sample.origin, space=self.describe_space(run, sample))
        if self._counted_images[0] != run.run_id:
            self._counted_images = (run.run_id, set())
            self._counted_messages = {}
        counted = self._counted_images[1]
        # A history turn is one object sample after sample: its images are counted with its first.
        fresh = [m for m in sample.prompt if id(m) not in self._counted_messages]
        for message in fresh:
            # Kept while remembered, so its id is not reused for another message meanwhile.
            remember(self._counted_messages, id(message), message)
        for ref in image_refs(fresh):
            name = str(ref.get("file"))
            if name not in counted:
                counted.add(name)
                mime = ref.get("mime") or ("image/jpeg" if name.endswith(".jpg") else "image/png")
                size = self.options.train_size or (ref.get("width"), ref.get("height"))
                self.card.images[(size[0], size[1], str(mime))] += 1

    def describe_space(self, run: ExportRun, sample: Sample) -> str | None:
        """The coordinate space of a sample's target, for the card."""
        space = sample.space
        if space is None:
            return None
        w, h = space.screen
        frame = (
            ""
            if space.mode in ("rel1000", "norm", "abs")
            else " in a {:g}x{:g} frame".format(*space.model_size)
        )
        language = (
            f"{self.samples.profile_name()} profile" if sample.origin == "reprompt" else run_language(run)
        )
        return f"{space.mode}{frame} of a {w}x{h} screen ({language})"

    def messages(self, run: ExportRun, sample: Sample) -> list[dict[str, Any]]:
        """The sample's prompt and target as OpenAI messages, images resolved for this export."""
        assert sample.target is not None
        convo = [*sample.prompt, {"role": "assistant", "content": sample.target}]
        if self.rescaler is not None and sample.space is not None:
            convo = self.rescaler.messages(convo, self.language(run, sample), sample.space)
            return openai_messages(convo, lambda ref: self.image_url(run, ref))
        return [self.resolved(run, m).message for m in sample.prompt] + openai_messages(convo[-1:], str)

    def resolved(self, run: ExportRun, message: dict[str, Any]) -> _Resolved:
        """A prompt message with its images resolved for this export (once per message of a run)."""
        if self._resolved[0] != run.run_id:
            self._resolved = (run.run_id, {})
        cache = self._resolved[1]
        entry = cache.get(id(message))
        if entry is None:
            converted = openai_messages([message], lambda ref: self.image_url(run, ref))[0]
            entry = remember(cache, id(message), _Resolved(message, converted))
        return entry

    def card_details(self) -> list[str]:
        """Notes on rescaling, for the card."""
        if self.rescaler is None:
            return []
        return [
            f"With --train-size: images scaled to {self.rescaler.size[0]}x{self.rescaler.size[1]} and pixel "
            "coordinates in every assistant turn re-written for that image "
            f"({self.rescaler.unparsed} turns could not be parsed and were kept as recorded)."
        ]


class _Resolved:
    """A prompt message, the same with its images resolved, and that one's JSON and ShareGPT turn.

    The JSON and the turn are made when first needed.
    """

    __slots__ = ("_json", "_turn", "message", "source")

    def __init__(self, source: dict[str, Any], message: dict[str, Any]) -> None:
        self.source = source
        self.message = message
        self._json: str | None = None
        self._turn: _Turn | None = None

    def json(self) -> str:
        """The resolved message as :func:`json.dumps` writes it in a line."""
        if self._json is None:
            self._json = json.dumps(self.message, ensure_ascii=False)
        return self._json

    def turn(self) -> _Turn:
        """The resolved message as a ShareGPT turn: its role, text with ``<image>`` tokens and images."""
        if self._turn is None:
            self._turn = _turn(self.message)
        return self._turn


class _SftExporter(SampleExporter):
    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.episode_level = options.per == "episode"

    def shape(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError

    def add_run(self, run: ExportRun) -> int:
        """One line per kept step, or one line for the run."""
        ids = {"run_id": run.run_id, "task_id": run.task_id, "domain": run.domain}
        if self.options.per == "episode":
            return self._episode(run, ids)
        count = 0
        for sample in self.samples.samples(run):
            if sample.target is None or not self.keeps(sample.step):
                continue
            head = {
                "id": f"{run.run_id}/{sample.step.index}",
                **ids,
                "step": sample.step.index,
                "source": sample.source,
                "prompt": sample.origin,
            }
            self.write_sample(run, sample, head)
            self.count(run, sample)
            count += 1
        return count

    def write_sample(self, run: ExportRun, sample: Sample, head: dict[str, Any]) -> None:
        """Write one step's sample: ``head`` (ids) and the sample in the format's shape."""
        self.write({**head, **self.shape(self.messages(run, sample))})

    def _episode(self, run: ExportRun, ids: dict[str, Any]) -> int:
        """The conversation of the run's last sample: what the model was sent last, and its reply."""
        last: Sample | None = None
        for sample in self.samples.samples(run):
            if sample.target is not None:
                last = sample
        if last is not None and last.origin != "reprompt":
            messages = self.messages(run, last)
            self.count(run, last)
            origin: str = last.origin
        else:
            chat = ChatBuilder(self.options, _FileRefs())
            convo = to_compact(chat.episode(run))
            messages = openai_messages(convo, lambda ref: self.image_url(run, ref))
            self.card.count("agent", origin="reprompt")
            origin = "reprompt"
        self.write({"id": run.run_id, **ids, "prompt": origin, **self.shape(messages)})
        return 1


class _FileRefs:
    def ref(self, run: ExportRun, path: Path) -> str:
        return path.name


class MessagesExporter(_SftExporter):
    """OpenAI chat messages with ``image_url`` parts."""

    name = "sft-messages"
    default_images = "embed"

    def card_details(self) -> list[str]:
        """What the records hold."""
        return [
            '`data.jsonl`: OpenAI chat fine-tuning records, `{"messages": [...]}` plus `id, run_id, '
            "task_id, domain, step, source, prompt`. The messages before the last are the request as "
            "sent (content a string or a list of `text` / `image_url` parts, as the agent sent it); "
            "the last is the target.",
            *super().card_details(),
        ]

    def shape(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """``{"messages": [...]}``."""
        return {"messages": messages}

    def write_sample(self, run: ExportRun, sample: Sample, head: dict[str, Any]) -> None:
        """Write ``head`` and ``messages``; each prompt message's JSON is made once per run.

        The line is the one :func:`json.dumps` writes for the whole record, put together from the
        messages' JSON (history turns repeat in every later sample of a run, images and all).
        """
        if self.rescaler is not None:
            super().write_sample(run, sample, head)
            return
        assert sample.target is not None
        parts = [self.resolved(run, m).json() for m in sample.prompt]
        target = {"role": "assistant", "content": sample.target}
        parts.append(json.dumps(target, ensure_ascii=False))
        self.write_line(
            json.dumps(head, ensure_ascii=False)[:-1] + ', "messages": [' + ", ".join(parts) + "]}"
        )


class ShareGptExporter(_SftExporter):
    """ShareGPT conversations with ``<image>`` tokens and an ``images`` list, and ``dataset_info.json``."""

    name = "sft-sharegpt"

    def shape(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """``{"system", "conversations", "images"}``."""
        return to_sharegpt(messages)

    def write_sample(self, run: ExportRun, sample: Sample, head: dict[str, Any]) -> None:
        """Write ``head`` and the ShareGPT record; each prompt message is converted once per run."""
        if self.rescaler is not None:
            super().write_sample(run, sample, head)
            return
        assert sample.target is not None
        target = openai_messages([{"role": "assistant", "content": sample.target}], str)[0]
        turns = [self.resolved(run, m).turn() for m in sample.prompt]
        self.write({**head, **_sharegpt([*turns, _turn(target)])})

    def card_details(self) -> list[str]:
        """How LLaMA-Factory reads the export, and the ``image_max_pixels`` it needs."""
        sizes = [w * h for (w, h, _mime) in self.card.images if isinstance(w, int) and isinstance(h, int)]
        largest = max(sizes, default=0)
        return [
            f"`data.jsonl` in LLaMA-Factory's sharegpt format, registered as `{DATASET_NAME}` in "
            "`dataset_info.json`: set `dataset_dir` to this folder and `dataset: "
            f"{DATASET_NAME}`; image paths are relative to it (LLaMA-Factory's default `media_dir`).",
            "Each `<image>` stands where an image was in the message; consecutive messages of one role "
            "were joined with a newline, as ShareGPT alternates roles.",
            f"LLaMA-Factory resizes images larger than `image_max_pixels` (768x768 = 589824 by default), "
            f"which would move what pixel coordinates point at: set `image_max_pixels: {largest}` (the "
            "largest image here) or more in the training config, or export with `--train-size WxH`.",
            *super().card_details(),
        ]

    def close(self) -> None:
        """Close ``data.jsonl`` and register it in ``dataset_info.json``."""
        super().close()
        info = {
            DATASET_NAME: {
                "file_name": self.file_name,
                "formatting": "sharegpt",
                "columns": {"messages": "conversations", "system": "system", "images": "images"},
                "tags": {
                    "role_tag": "from",
                    "content_tag": "value",
                    "user_tag": "human",
                    "assistant_tag": "gpt",
                },
            }
        }
        self.staged("dataset_info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


_SHAREGPT_ROLES = {"user": "human", "assistant": "gpt"}


def _text_with_images(content: Any) -> tuple[str, list[str]]:
    if isinstance(content, str):
        return content, []
    text: list[str] = []
    images: list[str] = []
    for part in content or []:
        if not (type(part) is dict or isinstance(part, Mapping)):
            continue
        if part.get("type") == "image_url":
            images.append(str((part.get("image_url") or {}).get("url")))
            text.append("<image>")
        elif part.get("type") == IMAGE_REF:
            images.append(str(part.get("file")))
            text.append("<image>")
        elif isinstance(part.get("text"), str):
            text.append(part["text"])
    return "".join(text), images


def to_sharegpt(messages: list[dict[str, Any]]) -> dict[str, Any]:
    r"""ShareGPT (LLaMA-Factory): ``system``, ``conversations`` with ``<image>`` where each image was, ``images``.

    Consecutive messages of one role become one turn (joined by a newline), as ShareGPT alternates.

    >>> to_sharegpt([{"role": "system", "content": "s"},
    ...              {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    ...              {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "a.png"}}]},
    ...              {"role": "assistant", "content": "ok"}])
    {'system': 's', 'conversations': [{'from': 'human', 'value': 'hi\n<image>'}, {'from': 'gpt', 'value': 'ok'}], 'images': ['a.png']}
    """  # noqa: E501
    return _sharegpt([_turn(message) for message in messages])


_Turn = tuple[str, str, list[str]]
"""A message as ShareGPT takes it: its role (``system``, ``human`` or ``gpt``), text and images."""


def _turn(message: Mapping[str, Any]) -> _Turn:
    text, images = _text_with_images(message.get("content"))
    role = message.get("role")
    return ("system" if role == "system" else _SHAREGPT_ROLES.get(str(role), "human"), text, images)


def _sharegpt(turns: list[_Turn]) -> dict[str, Any]:
    system: list[str] = []
    conversations: list[dict[str, str]] = []
    images: list[str] = []
    for tag, text, found in turns:
        if tag == "system":
            system.append(text)
            continue
        images += found
        if conversations and conversations[-1]["from"] == tag:
            conversations[-1]["value"] += "\n" + text
        else:
            conversations.append({"from": tag, "value": text})
    return {"system": "\n".join(system), "conversations": conversations, "images": images}
