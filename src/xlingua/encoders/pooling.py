"""Pooling token states into one sentence vector, and the sentence-transformers files that
describe it (read from any sentence-transformers directory, written by `save_encoder`)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

MODES = ("mean", "cls", "max")
# sentence-transformers (classic config keys) -> our names
_ST_KEYS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls",
            "pooling_mode_max_tokens": "max"}


def pool(hidden: torch.Tensor, mask: torch.Tensor, mode: str) -> torch.Tensor:
    """(batch, tokens, dim) states and a (batch, tokens) 0/1 mask -> (batch, dim).
    Mean and max run over every unmasked token, special tokens included."""
    if mode == "cls":
        return hidden[:, 0]
    m = mask.unsqueeze(-1).to(hidden.dtype)
    if mode == "mean":
        return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)
    if mode == "max":
        return hidden.masked_fill(m == 0, torch.finfo(hidden.dtype).min).max(1).values
    raise ValueError(f"pooling must be one of {MODES}, got {mode!r}")


@dataclass
class STSettings:
    """What a sentence-transformers directory says about pooling and inputs."""
    pooling: str | None = None
    normalize: bool | None = None
    max_length: int | None = None
    prefix: str | None = None
    #: where the transformer's own files are ("" = the directory itself)
    transformer_path: str | None = None


def read_st_settings(model_dir: str | Path) -> STSettings:
    """Pooling mode, Normalize module, max_seq_length and default prompt of a
    sentence-transformers directory (all None for a plain transformers directory)."""
    model_dir = Path(model_dir)
    out = STSettings()
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        return out
    modules = json.loads(modules_file.read_text())
    out.normalize = any(m.get("type", "").endswith("Normalize") for m in modules)
    for m in modules:
        if m.get("type", "").endswith("Transformer"):
            out.transformer_path = m.get("path", "")
    for m in modules:
        if m.get("type", "").endswith("Pooling"):
            cfg_file = model_dir / m["path"] / "config.json"
            cfg = json.loads(cfg_file.read_text())
            if "pooling_mode" in cfg:  # sentence-transformers >= 6
                modes = [cfg["pooling_mode"]] if isinstance(cfg["pooling_mode"], str) \
                    else list(cfg["pooling_mode"])
            else:
                modes = [k.replace("pooling_mode_", "") for k, v in cfg.items()
                         if k.startswith("pooling_mode_") and v]
                modes = [_ST_KEYS.get("pooling_mode_" + k, k) for k in modes]
            if len(modes) != 1 or modes[0] not in MODES:
                raise ValueError(f"{cfg_file}: pooling {modes} is not supported; "
                                 f"xlingua pools with one of {MODES}")
            out.pooling = modes[0]
    bert_cfg = model_dir / "sentence_bert_config.json"
    if bert_cfg.is_file():
        out.max_length = json.loads(bert_cfg.read_text()).get("max_seq_length")
    st_cfg = model_dir / "config_sentence_transformers.json"
    if st_cfg.is_file():
        cfg = json.loads(st_cfg.read_text())
        name = cfg.get("default_prompt_name")
        if name:
            out.prefix = (cfg.get("prompts") or {}).get(name)
    return out


def st_pooling_config(mode: str, dim: int) -> dict:
    """1_Pooling/config.json in the classic format every sentence-transformers version reads."""
    if mode not in MODES:
        raise ValueError(f"pooling must be one of {MODES}, got {mode!r}")
    cfg = {"word_embedding_dimension": dim}
    for key, name in _ST_KEYS.items():
        cfg[key] = name == mode
    cfg.update(pooling_mode_mean_sqrt_len_tokens=False, pooling_mode_weightedmean_tokens=False,
               pooling_mode_lasttoken=False, include_prompt=True)
    return cfg
