"""Saving an encoder (transformer + tokenizer + pooling) as a directory that both xlingua
(`load_encoder(dir)`) and sentence-transformers (`SentenceTransformer(dir)`) load.

Layout: config.json, model.safetensors, tokenizer files, modules.json, 1_Pooling/config.json,
2_Normalize/ (when normalizing), sentence_bert_config.json (max_seq_length),
config_sentence_transformers.json (prompts, e.g. e5's "query: "), and xlingua.json (the
xlingua-only settings: tokenizer kind, prefix, pooling, max length, and any `meta`).
The directory is written under a temporary name and renamed into place when complete.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

from xlingua.encoders.pooling import st_pooling_config
from xlingua.encoders.quiet import quiet_transformers
from xlingua.io import atomic_dir

XLINGUA_FILE = "xlingua.json"
SAVE_FORMAT = 1


def save_encoder(model, tokenizer, out_dir: str | Path, pooling: str = "mean",
                 normalize: bool = True, max_seq_length: int = 512, prefix: str = "",
                 prompts: dict[str, str] | None = None, layer: int | None = None,
                 meta: dict | None = None, overwrite: bool = True) -> Path:
    """Write `model` (a transformers model) and `tokenizer` (an xlingua tokenizer with
    `.save(dir)`, or anything with `save_pretrained`) to `out_dir`, replacing it atomically.

    `prefix` is prepended to every text (saved as sentence-transformers' default prompt);
    `prompts` names extra prompts (e.g. {"passage": "passage: "}). With `layer` set, only the
    first `layer` transformer blocks are saved, so every loader reads that layer's states.
    With overwrite=False an existing `out_dir` is kept and FileExistsError raised.
    """
    out_dir = Path(out_dir)
    if not overwrite and out_dir.exists():
        raise FileExistsError(f"{out_dir} already exists")
    with atomic_dir(out_dir, replace=overwrite) as tmp:
        if layer is not None:
            model = _truncate_layers(model, layer)
        with quiet_transformers():
            model.save_pretrained(str(tmp), safe_serialization=True)
        if hasattr(tokenizer, "save_pretrained"):
            tokenizer.save_pretrained(str(tmp))
        else:
            tokenizer.save(tmp)
        dim = model.config.hidden_size
        modules = [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling",
             "type": "sentence_transformers.models.Pooling"},
        ]
        (tmp / "1_Pooling").mkdir()
        _write_json(tmp / "1_Pooling" / "config.json", st_pooling_config(pooling, dim))
        if normalize:
            modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                            "type": "sentence_transformers.models.Normalize"})
            (tmp / "2_Normalize").mkdir()
        _write_json(tmp / "modules.json", modules)
        _write_json(tmp / "sentence_bert_config.json",
                    {"max_seq_length": int(max_seq_length), "do_lower_case": False})
        all_prompts = dict(prompts or {})
        default_name = None
        if prefix:
            default_name = next((k for k, v in all_prompts.items() if v == prefix), "default")
            all_prompts[default_name] = prefix
        _write_json(tmp / "config_sentence_transformers.json", {
            "prompts": all_prompts, "default_prompt_name": default_name,
            "similarity_fn_name": "cosine"})
        _write_json(tmp / XLINGUA_FILE, {
            "format": SAVE_FORMAT, "tokenizer": getattr(tokenizer, "kind", "hf"),
            "prefix": prefix, "pooling": pooling, "normalize": normalize,
            "max_length": int(max_seq_length), **(meta or {})})
    return out_dir


def _truncate_layers(model, layer: int):
    """A copy of a BERT-like model keeping its first `layer` blocks (hidden_states[layer])."""
    blocks = getattr(getattr(model, "encoder", None), "layer", None)
    if blocks is None:
        raise ValueError(f"cannot save layer {layer} of a {type(model).__name__}: "
                         "only BERT-like models (model.encoder.layer) are supported")
    n = len(blocks)
    keep = layer if layer >= 0 else n + 1 + layer
    if not 0 <= keep <= n:
        raise ValueError(f"layer {layer} out of range for a model with {n} layers")
    model = copy.deepcopy(model)
    model.encoder.layer = model.encoder.layer[:keep]
    model.config.num_hidden_layers = keep
    return model


def _write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
