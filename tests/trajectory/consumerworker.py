"""Feed exports to the trainers that read them, in the consumers side environment (.venv-consumers).

Runs with that environment's Python (scripts/setup-consumers.sh), never the project's: it imports torch,
TRL, transformers and LLaMA-Factory. Usage::

    consumerworker.py KIND FOLDER [KIND FOLDER ...]   # KIND: sharegpt or preference

prints one JSON object: per folder, what the consumer made of it. Nothing here decides whether that is
right; tests/trajectory/test_consumers.py does.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import types
from typing import Any


def scratch() -> str:
    """A folder for the consumers' caches and outputs (the caller's working directory, a scratch one)."""
    return os.getcwd()


def llamafactory_modules() -> dict[str, Any]:
    """LLaMA-Factory's dataset parser, converter, data arguments and image placeholder.

    Its packages ``llamafactory.data`` and ``llamafactory.hparams`` import, in their ``__init__``, the
    collators and multimodal plugins (which import torchaudio: no PyPI build of it loads beside the CPU
    torch) and the training arguments parser. The modules used here do not need them, so those two
    packages are entered without running their ``__init__``; every module below is LLaMA-Factory's own.
    """
    spec = importlib.util.find_spec("llamafactory")
    assert spec is not None and spec.submodule_search_locations
    root = next(iter(spec.submodule_search_locations))
    for name in ("data", "hparams"):
        package = types.ModuleType(f"llamafactory.{name}")
        package.__path__ = [os.path.join(root, name)]
        sys.modules[package.__name__] = package
    from llamafactory.data import converter, parser
    from llamafactory.extras.constants import DATA_CONFIG, IMAGE_PLACEHOLDER
    from llamafactory.hparams.data_args import DataArguments

    return {
        "converter": converter,
        "parser": parser,
        "DataArguments": DataArguments,
        "DATA_CONFIG": DATA_CONFIG,
        "IMAGE_PLACEHOLDER": IMAGE_PLACEHOLDER,
    }


def sharegpt(folder: str) -> dict[str, Any]:
    """The export as LLaMA-Factory reads it: dataset_info.json parsed, rows aligned by its converter."""
    import datasets
    from transformers import Seq2SeqTrainingArguments

    lf = llamafactory_modules()
    with open(os.path.join(folder, lf["DATA_CONFIG"])) as f:
        names = list(json.load(f))
    attr = lf["parser"].get_dataset_list(names, folder)[0]
    data_args = lf["DataArguments"](dataset_dir=folder, dataset=names[0])
    # As LLaMA-Factory's loader reads a local file: the json builder over the registered file name.
    dataset = datasets.load_dataset(
        "json",
        data_files=os.path.join(folder, attr.dataset_name),
        split="train",
        cache_dir=os.path.join(scratch(), "cache"),
    )
    training_args = Seq2SeqTrainingArguments(output_dir=os.path.join(scratch(), "out"), report_to=[])
    aligned = lf["converter"].align_dataset(dataset, attr, data_args, training_args)
    token = lf["IMAGE_PLACEHOLDER"]
    rows = []
    for row in aligned:
        turns = row["_prompt"] + row["_response"]
        rows.append(
            {
                "roles": [t["role"] for t in turns],
                "image_tokens": sum(t["content"].count(token) for t in turns),
                "images": row["_images"] or [],
                "response": row["_response"][-1]["content"] if row["_response"] else None,
                "system": row["_system"],
            }
        )
    return {"formatting": attr.formatting, "load_from": attr.load_from, "rows": rows}


# A chat template in the ChatML shape: each image part becomes the processor's image token.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>"]
IMAGE_SIDE, PATCH = 28, 14
"""Images are processed at 28x28 in 14-pixel patches: 4 image tokens each."""


def _byte_chars() -> list[str]:
    """One printable character per byte (the byte-level BPE alphabet)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = [], 0
    for b in range(256):
        if b in keep:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


def vision_processor() -> Any:
    """A LLaVA processor built here, with no model download: a byte-level tokenizer, CLIP's image
    processor (its PIL build: torchvision does not load beside the CPU torch) at a small size, and
    LLaVA's processor class, which checks that the text holds one image token per image and expands it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlavaProcessor, PreTrainedTokenizerFast
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    vocab = {c: i for i, c in enumerate(_byte_chars())}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL,
    )
    side = {"height": IMAGE_SIDE, "width": IMAGE_SIDE}
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": IMAGE_SIDE}, crop_size=side)
    return LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH,
        vision_feature_select_strategy="full",
        chat_template=CHAT_TEMPLATE,
    )


def preference(folder: str) -> dict[str, Any]:
    """The pairs as TRL's vision DPO reads them: loaded with their images, collated into one batch."""
    import datasets
    from trl.trainer.dpo_trainer import DataCollatorForVisionPreference

    dataset = datasets.load_dataset(
        "json",
        data_files=os.path.join(folder, "data.jsonl"),
        split="train",
        cache_dir=os.path.join(scratch(), "cache"),
    )
    # Image paths are relative to the export folder (the dataset card says so); datasets decodes them.
    dataset = dataset.map(lambda row: {"images": [os.path.join(folder, p) for p in row["images"]]})
    dataset = dataset.cast_column("images", datasets.Sequence(datasets.Image()))
    processor = vision_processor()
    examples = [dict(dataset[i]) for i in range(len(dataset))]
    sizes = [[list(image.size) for image in e["images"]] for e in examples]
    batch = DataCollatorForVisionPreference(processor)(examples)
    completion = batch["completion_mask"]
    n = len(examples)
    return {
        "pairs": n,
        "image_sizes": sizes,
        "rows": int(batch["input_ids"].shape[0]),
        "pixel_values": list(batch["pixel_values"].shape),
        "image_tokens": int((batch["input_ids"] == processor.image_token_id).sum()),
        "tokens_per_image": (IMAGE_SIDE // PATCH) ** 2,
        "completion_tokens": [int(c) for c in completion.sum(dim=1)],
        "chosen": processor.tokenizer.decode(batch["input_ids"][0][completion[0].bool()]),
        "rejected": processor.tokenizer.decode(batch["input_ids"][n][completion[n].bool()]),
    }


def main(argv: list[str]) -> int:
    """Read each ``KIND FOLDER`` pair; print the results as JSON."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    results = []
    for kind, folder in zip(argv[::2], argv[1::2], strict=True):
        results.append(
            {"kind": kind, "folder": folder, **{"sharegpt": sharegpt, "preference": preference}[kind](folder)}
        )
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
