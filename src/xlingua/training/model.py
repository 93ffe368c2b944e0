"""The trainable sentence encoder: any transformers encoder (e.g. a BertModel) + its tokenizer,
mean/cls/max pooling, an optional text prefix ("query: " for e5), and token embeddings of a
chosen layer for the token-level objectives (DuEAM's WMD, OneAligner's BERTScore).

`save` writes a directory that transformers, sentence-transformers and `xlingua embed --model
DIR` load: the HF model + tokenizer, modules.json, 1_Pooling/config.json, (2_Normalize) and
config_sentence_transformers.json carrying the prefix as the default prompt.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch
from torch import nn

POOLINGS = ("mean", "cls", "max")


class SentenceModel(nn.Module):
    def __init__(self, model, tokenizer, pooling: str = "mean", prefix: str = "",
                 max_seq_length: int = 128, normalize: bool = True):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        self.model = model
        self.tokenizer = tokenizer
        self.pooling = pooling
        self.prefix = prefix
        self.max_seq_length = max_seq_length
        self.normalize = normalize  # for inference output and the saved model; losses normalize themselves

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)

    @classmethod
    def load(cls, spec: str, max_seq_length: int = 128) -> "SentenceModel":
        """From a model directory (transformers or sentence-transformers layout) or
        `bundled:torch` (the bundled multilingual-e5-small as a BertModel)."""
        from transformers import AutoModel, AutoTokenizer

        path = Path(_resolve(spec))
        settings = _read_st_settings(path)
        model = AutoModel.from_pretrained(path)
        tokenizer = AutoTokenizer.from_pretrained(path)
        return cls(model, tokenizer, max_seq_length=max_seq_length, **settings)

    def tokenize(self, texts: list[str]) -> dict:
        return self.tokenizer([self.prefix + t for t in texts], padding=True, truncation=True,
                              max_length=self.max_seq_length, return_tensors="pt",
                              return_special_tokens_mask=True)

    def forward(self, texts: list[str], token_layer: int | None = None) -> dict:
        """{"embedding": (n, d)} pooled from the last layer; with `token_layer` (an index into
        hidden_states, -1 = last) also {"tokens": (n, L, d), "token_mask": (n, L)} where the
        mask drops padding and the special tokens ([CLS], [SEP])."""
        batch = self.tokenize(texts)
        special = batch.pop("special_tokens_mask")
        want_hidden = token_layer is not None and token_layer != -1
        out = self.model(**batch, output_hidden_states=want_hidden)
        last = out.last_hidden_state
        mask = batch["attention_mask"]
        result = {"embedding": pool(last, mask, self.pooling)}
        if token_layer is not None:
            result["tokens"] = last if token_layer == -1 else out.hidden_states[token_layer]
            result["token_mask"] = mask * (1 - special)
        return result

    @torch.no_grad()
    def encode(self, texts: list[str], batch_size: int = 64) -> torch.Tensor:
        """Inference embeddings (normalized if self.normalize), in input order."""
        was_training = self.training
        self.eval()
        try:
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            out = torch.zeros(len(texts), self.dim)
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                emb = self([texts[i] for i in idx])["embedding"]
                out[idx] = nn.functional.normalize(emb, dim=-1) if self.normalize else emb
            return out
        finally:
            self.train(was_training)

    def save(self, path: str | Path) -> Path:
        """Write the model atomically: a temp dir next to `path`, then a rename."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        self.model.save_pretrained(tmp)
        self.tokenizer.save_pretrained(tmp)
        modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
        if self.normalize:
            modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
            (tmp / "2_Normalize").mkdir()
        (tmp / "1_Pooling").mkdir()
        _write_json(tmp / "modules.json", modules)
        _write_json(tmp / "1_Pooling" / "config.json", {
            "word_embedding_dimension": self.dim,
            "pooling_mode_cls_token": self.pooling == "cls",
            "pooling_mode_mean_tokens": self.pooling == "mean",
            "pooling_mode_max_tokens": self.pooling == "max",
            "pooling_mode_mean_sqrt_len_tokens": False,
        })
        _write_json(tmp / "sentence_bert_config.json", {"max_seq_length": self.max_seq_length, "do_lower_case": False})
        prompts = {"query": self.prefix} if self.prefix else {}
        _write_json(tmp / "config_sentence_transformers.json", {
            "prompts": prompts, "default_prompt_name": "query" if self.prefix else None,
            "similarity_fn_name": "cosine"})
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
        return path


def pool(hidden: torch.Tensor, mask: torch.Tensor, mode: str) -> torch.Tensor:
    if mode == "cls":
        return hidden[:, 0]
    m = mask.unsqueeze(-1).to(hidden.dtype)
    if mode == "max":
        return hidden.masked_fill(m == 0, torch.finfo(hidden.dtype).min).max(dim=1).values
    return (hidden * m).sum(1) / m.sum(1).clamp_min(1e-9)


def _resolve(spec: str) -> str:
    if spec == "bundled:torch":
        from xlingua.encoders import bundled

        return str(bundled.converted_model_dir())
    if not Path(spec).exists():
        raise FileNotFoundError(f"model directory not found: {spec} (give a transformers model dir or bundled:torch)")
    return spec


def _read_st_settings(path: Path) -> dict:
    """Pooling, prefix and normalization from a sentence-transformers layout, if present."""
    settings = {}
    modules_file = path / "modules.json"
    if modules_file.exists():
        modules = json.loads(modules_file.read_text())
        settings["normalize"] = any(m["type"].endswith("Normalize") for m in modules)
        for m in modules:
            if m["type"].endswith("Pooling"):
                cfg = json.loads((path / m["path"] / "config.json").read_text())
                settings["pooling"] = "cls" if cfg.get("pooling_mode_cls_token") else "max" if cfg.get("pooling_mode_max_tokens") else "mean"
    st_cfg = path / "config_sentence_transformers.json"
    if st_cfg.exists():
        cfg = json.loads(st_cfg.read_text())
        name = cfg.get("default_prompt_name")
        if name:
            settings["prefix"] = cfg.get("prompts", {}).get(name, "")
    return settings


def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
