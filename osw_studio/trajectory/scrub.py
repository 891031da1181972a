r"""Keeping secrets out of run stores and exports.

Two guards: values under secret-named keys (``api_key``, ``token``, ``password``, ...) are dropped from
settings snapshots, and every string written anywhere has API-key-shaped substrings and the known secret
values replaced by ``[REDACTED]``: plain, URL-encoded, inside base64, in hex, reversed, or split by
line breaks, spaces or quotes; a secret typed in pieces by consecutive ``typing`` actions of a step, or
spread over the text parts of one message, is redacted in every piece; in exports, so is one typed across
consecutive steps (:meth:`Scrubber.across_steps`). Typed text can additionally be
scrubbed with user regexes (passwords a person typed into the guest, e-mail addresses, ...).

Examples:
    >>> s = Scrubber(secrets=["hunter2-very-secret"])
    >>> s.text("key sk-proj-abcdefghijklmnop0123 and hunter2-very-secret")
    'key [REDACTED] and [REDACTED]'
    >>> redact_settings({"model_provider": {"api_key": "x", "model": "m"}, "agent": {"max_tokens": 5}})
    {'model_provider': {'api_key': '[REDACTED]', 'model': 'm'}, 'agent': {'max_tokens': 5}}
    >>> Scrubber(typed_patterns=[r"\d{4}"]).typed("pin 1234")
    'pin [REDACTED]'
"""

from __future__ import annotations

import base64
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from osw_studio.core.step import StepRecord

REDACTED = "[REDACTED]"

KEY_PATTERNS: tuple[str, ...] = (
    r"sk-[A-Za-z0-9_\-]{16,}",  # OpenAI, Anthropic (sk-ant-), DeepSeek, many OpenAI-compatible hosts
    r"hf_[A-Za-z0-9]{20,}",  # Hugging Face
    r"gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"AKIA[0-9A-Z]{16}",  # AWS access key id
    r"AIza[0-9A-Za-z_\-]{30,}",  # Google
    r"(?:xai|gsk|pplx|nvapi|fw|r8)[-_][A-Za-z0-9]{20,}",  # xAI, Groq, Perplexity, NVIDIA, ...
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
    r"eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # JWT
    r"(?i:bearer)\s+[A-Za-z0-9._~+/=\-]{16,}",
)
"""Substrings that look like API keys or credentials, whatever the field they sit in."""

_KEY_RE = re.compile("|".join(f"(?:{p})" for p in KEY_PATTERNS))
# api_key=..., "token": "...": keep the name, drop the value, whatever its shape.
_NAMED_VALUE_RE = re.compile(
    r"(?P<name>(?i:api[_-]?key|secret|token|password|passwd)[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\s\"',}]{8,})"
)
_SECRET_NAME_RE = re.compile(
    r"(?i)^(?:.*[_\-.])?(?:api[_\-]?key|apikey|key|secret|token|password|passwd|authorization|credentials?|"
    r"access[_\-]?key|private[_\-]?key)$"
)
_REMEMBERED_LENGTH = 256
"""Strings up to this long are scrubbed once per scrubber (longer ones rarely repeat)."""
_REMEMBERED = 4096
"""How many scrubbed strings a scrubber remembers before it starts over (bounds its memory)."""
MIN_SECRET_LENGTH = 6
"""Known secret values shorter than this are not scrubbed (they would redact ordinary words)."""

JOINED_STEPS = 64
"""Most consecutive steps whose typing is joined to find a key typed across them (a key typed one
character a step over more steps than this is not recognised)."""


_GAP = r"(?:[ \t\r\n\"'`+,|]|\\[nrt]){0,5}"
"""What may sit between two characters of a secret that was split: line breaks (real or escaped),
spaces, quotes and the ``+`` or ``,`` of a string split in code (``" + "``), at most five of them."""


def encoded_forms(secret: str) -> list[str]:
    r"""Regular expressions for ``secret`` as written plainly, URL-encoded, in base64, in hex or reversed.

    Plain and URL-encoded forms may be split (:data:`_GAP` between characters). Hex may be upper or lower
    case, its bytes run together or written ``\x73``, ``0x73``, or with spaces, colons or commas between.
    URL encoding may hit any character (``%73k-`` is ``sk-``), in upper or lower case hex. In base64 the
    secret's encoding depends on its offset in the encoded data (0, 1 or 2 bytes after a 3-byte boundary),
    so each offset gives the characters that only the secret's bytes determine; standard and URL-safe
    alphabets both.

    >>> import base64, re
    >>> pattern = re.compile("|".join(encoded_forms("sk-secret-123")))
    >>> bool(pattern.search(base64.b64encode(b"user:sk-secret-123").decode()))
    True
    >>> bool(pattern.search("key=%73k%2Dsecret-123")), bool(pattern.search("sk-secret-12"))
    (True, False)
    >>> forms = ("sk-sec\nret-123", "321-terces-ks", "sk-secret-123".encode().hex())
    >>> [bool(pattern.search(t)) for t in forms]
    [True, True, True]
    """
    chars = [f"(?:{re.escape(c)}|%(?i:{ord(c):02x}))" if ord(c) < 128 else re.escape(c) for c in secret]
    forms = [_GAP.join(chars), re.escape(secret[::-1])]
    raw = secret.encode("utf-8")
    forms.append("(?i:" + r"[ :,]{0,2}".join(rf"(?:\\x|0x)?{b:02x}" for b in raw) + ")")
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        start = -(-8 * offset // 6)  # the first character without bits of the bytes before
        end = (8 * (offset + len(raw))) // 6  # the last character without bits of the bytes after
        core = encoded[start:end]
        if len(core) >= MIN_SECRET_LENGTH:
            forms.append(re.escape(core))
            forms.append(re.escape(core.replace("+", "-").replace("/", "_")))
    return forms


def is_secret_name(name: str) -> bool:
    """Whether a settings key names a secret.

    >>> is_secret_name("api_key"), is_secret_name("OPENAI_API_KEY"), is_secret_name("max_tokens")
    (True, True, False)
    """
    return bool(_SECRET_NAME_RE.match(name))


def redact_settings(data: Any) -> Any:
    """A copy of settings data with every value under a secret-named key replaced by ``[REDACTED]``."""
    if isinstance(data, Mapping):
        return {
            str(k): (REDACTED if is_secret_name(str(k)) and v not in (None, "") else redact_settings(v))
            for k, v in data.items()
        }
    if isinstance(data, list | tuple):
        return [redact_settings(v) for v in data]
    return data


class Scrubber:
    """Removes secrets (and optionally patterns of typed text) from strings, data and step records.

    Args:
        secrets: Known secret values (API keys in use); each occurrence is redacted.
        typed_patterns: Regexes applied to text typed into the guest (and to model replies and thoughts,
            which repeat it).
        replacement: What replaces a match.
    """

    def __init__(
        self,
        secrets: Iterable[str] = (),
        typed_patterns: Iterable[str | re.Pattern[str]] = (),
        replacement: str = REDACTED,
    ) -> None:
        known = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
        forms = sorted({form for secret in known for form in encoded_forms(secret)}, key=len, reverse=True)
        self._known = re.compile("|".join(forms)) if forms else None
        # One search tells whether any of the three rewrites of text() would change a string; most
        # strings hold nothing, and then that search is all they cost.
        any_form = [*(f"(?:{form})" for form in forms), _KEY_RE.pattern, _NAMED_VALUE_RE.pattern]
        self._any = re.compile("|".join(any_form))
        self._typed = [re.compile(p) if isinstance(p, str) else p for p in typed_patterns]
        self.replacement = replacement
        # What text() made of short strings: keys and repeated values (prompt texts, action kinds)
        # come back step after step, and a dictionary look-up costs far less than the search.
        self._done: dict[str, str] = {}

    @property
    def typed_patterns(self) -> list[re.Pattern[str]]:
        """The typed-text patterns in force."""
        return list(self._typed)

    def text(self, value: str) -> str:
        """``value`` with known secrets and key-shaped substrings redacted."""
        size = len(value)
        if size < 8:
            return value
        if size > _REMEMBERED_LENGTH:
            return self._redact(value)
        done = self._done.get(value)
        if done is None:
            if len(self._done) >= _REMEMBERED:
                self._done.clear()
            done = self._done[value] = self._redact(value)
        return done

    def _redact(self, value: str) -> str:
        if self._any.search(value) is None:
            return value
        if self._known is not None:
            value = self._known.sub(self.replacement, value)
        value = _KEY_RE.sub(self.replacement, value)
        return _NAMED_VALUE_RE.sub(lambda m: m.group("name") + self.replacement, value)

    def typed(self, value: str) -> str:
        """``value`` with the typed-text patterns and then secrets redacted."""
        for pattern in self._typed:
            value = pattern.sub(self.replacement, value)
        return self.text(value)

    def data(self, value: Any) -> Any:
        """A copy of JSON-like data with every string scrubbed by :meth:`text` (keys included)."""
        kind = type(value)  # the JSON types first: abstract-class checks cost more than the scrubbing
        if kind is str:
            return value if len(value) < 8 else self.text(value)
        if kind is dict:
            return self._dict(value)
        if kind is list:
            return [self.data(v) for v in value]
        if kind is int or kind is float or kind is bool or value is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value

    def _dict(self, value: dict[Any, Any]) -> dict[str, Any]:
        """:meth:`data` of a dict, with its strings and numbers handled in line (most of a step's values)."""
        text = self.text
        out: dict[str, Any] = {}
        for k, v in value.items():
            if type(k) is not str:
                k = text(str(k))
            elif len(k) >= 8:
                k = text(k)
            kind = type(v)
            if kind is str:
                if len(v) >= 8:
                    v = text(v)
            elif kind is dict:
                v = self._dict(v)
            elif not (kind is int or kind is float or kind is bool or v is None):
                v = self.data(v)
            out[k] = v
        return out

    def step(self, step: StepRecord) -> StepRecord:
        """A copy of ``step`` with nothing secret left in it."""
        return StepRecord.model_validate(self.step_data(step.model_dump(mode="json")))

    def step_data(self, data: dict[str, Any]) -> dict[str, Any]:
        """A step's JSON data (a ``steps.jsonl`` line, or a dumped :class:`StepRecord`) scrubbed."""
        data = dict(data)
        request = data.pop("request", None)
        if self._typed:
            for key in ("response", "thought"):
                if isinstance(data.get(key), str):
                    data[key] = self.typed(data[key])
            for key in ("proposed", "executed"):
                actions = data.get(key)
                for action in actions if isinstance(actions, list) else []:
                    typing = isinstance(action, dict) and action.get("kind") == "typing"
                    if typing and isinstance(action.get("text"), str):
                        action["text"] = self.typed(action["text"])
        for key in ("proposed", "executed"):
            if isinstance(data.get(key), list):
                data[key] = self._pieces(data[key], _typed_text, _with_text)
        data = self.data(data)
        if isinstance(request, dict):
            data["request"] = self._request(request)
        elif request is not None:
            data["request"] = request  # not a request: validation says so
        return data

    def across_steps(self, steps: Iterable[StepRecord]) -> Iterator[StepRecord]:
        """``steps`` (each already scrubbed) with a known secret typed across consecutive steps redacted.

        Half a key typed at the end of one step and the rest at the start of the next is redacted in
        both, in the actions (``proposed`` and ``executed``) and, for pieces of 4 characters or more, in
        the step's reply and thought, which repeat them. Only steps whose typing may go on in the next
        one are held back (at most :data:`JOINED_STEPS`), so the steps still stream.
        """
        if self._known is None:
            yield from steps
            return
        held: list[StepRecord] = []
        for step in steps:
            if held and not _typing_at(step, 0):
                yield from self._joined(held)
                held = []
            held.append(step)
            if not _typing_at(step, -1) or len(held) >= JOINED_STEPS:
                yield from self._joined(held)
                held = []
        yield from self._joined(held)

    def _joined(self, steps: list[StepRecord]) -> list[StepRecord]:
        if len(steps) < 2:
            return steps
        data = [step.model_dump(mode="json") for step in steps]
        changed: set[int] = set()
        for key in ("proposed", "executed"):
            owners = [(i, j) for i, d in enumerate(data) for j in range(len(d.get(key) or []))]
            flat = [data[i][key][j] for i, j in owners]
            redacted = self._pieces(flat, _typed_text, _with_text)
            for (i, j), before, after in zip(owners, flat, redacted, strict=True):
                if after is before:
                    continue
                changed.add(i)
                data[i][key][j] = after
                piece = before["text"]
                for field_name in ("response", "thought"):
                    if len(piece) >= 4 and isinstance(data[i].get(field_name), str):
                        data[i][field_name] = data[i][field_name].replace(piece, self.replacement)
        return [StepRecord.model_validate(data[i]) if i in changed else s for i, s in enumerate(steps)]

    def _request(self, request: dict[str, Any]) -> dict[str, Any]:
        """A recorded request, scrubbed.

        Its texts repeat earlier replies and typed text, so they get the typed-text patterns too. Image
        references (``image_ref`` parts, file names and hashes) and references to earlier messages hold
        no free text and are kept as they are, which keeps scrubbing a long run cheap.
        """
        scrub = self.typed if self._typed else self.text
        messages = []
        raw = request.get("messages")
        for message in raw if isinstance(raw, list) else []:
            if not isinstance(message, dict):
                messages.append(self.data(message))  # validation refuses it
                continue
            if "same_as" in message and len(message) == 1:
                messages.append(message)
                continue
            out = self.data({k: v for k, v in message.items() if k != "content"})
            content = message.get("content")
            if isinstance(content, str):
                out["content"] = scrub(content)
            elif isinstance(content, list):
                parts = self._pieces(content, _part_text, _with_text)
                out["content"] = [self._part(part, scrub) for part in parts]
            elif "content" in message:
                out["content"] = content
            messages.append(out)
        out_request: dict[str, Any] = self.data({k: v for k, v in request.items() if k != "messages"})
        if "messages" in request:
            out_request["messages"] = messages if isinstance(raw, list) else self.data(raw)
        return out_request

    def _pieces(self, items: list[Any], text_of: Any, with_text: Any) -> list[Any]:
        """``items`` with every text piece redacted whole when a known secret spans consecutive pieces.

        ``text_of`` gives an item's text (None when it has none: the run of pieces ends there);
        ``with_text`` gives the item with another text.
        """
        if self._known is None or len(items) < 2:
            return items
        out = list(items)
        run: list[int] = []
        for index in [*range(len(items)), -1]:
            text = text_of(items[index]) if index >= 0 else None
            if text is not None:
                run.append(index)
                continue
            if len(run) > 1:
                texts = [text_of(items[i]) for i in run]
                ends = list(itertools.accumulate(len(t) for t in texts))
                for match in self._known.finditer("".join(texts)):
                    for position, i in enumerate(run):  # each piece the match overlaps
                        if (
                            ends[position] > match.start()
                            and ends[position] - len(texts[position]) < match.end()
                        ):
                            out[i] = with_text(items[i], self.replacement)
            run = []
        return out

    def _part(self, part: Any, scrub: Any) -> Any:
        if isinstance(part, dict) and part.get("type") == "image_ref":
            return part
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return {**self.data({k: v for k, v in part.items() if k != "text"}), "text": scrub(part["text"])}
        return self.data(part)


def _typing_at(step: StepRecord, position: int) -> bool:
    """Whether ``step`` proposes or executes a ``typing`` action at ``position`` (0 first, -1 last)."""
    return any(actions and actions[position].kind == "typing" for actions in (step.proposed, step.executed))


def _typed_text(action: Any) -> str | None:
    ok = isinstance(action, dict) and action.get("kind") == "typing" and isinstance(action.get("text"), str)
    return action["text"] if ok else None


def _part_text(part: Any) -> str | None:
    ok = isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    return part["text"] if ok else None


def _with_text(item: dict[str, Any], text: str) -> dict[str, Any]:
    return {**item, "text": text}
