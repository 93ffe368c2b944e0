"""`bundled:ct2` and `bundled:int8`: the bundled e5-small (or a model shipped on it) run by
CTranslate2's encoder, in fp32 (`ct2`, same vectors as bundled:torch to 1e-6) or with int8
weights and activations (`int8`: per-row weight scales, per-row dynamic activation scales).
Chosen over torch's and ONNX Runtime's dynamic int8 by `benchmarks/int8_paths.py` (speed and
cosine to fp32 side by side; docs/results.md, "Embedding speed"). `bundled` runs :ct2 on CPUs
without native bf16 (bundled.PREFERENCE); :int8 misses the quality bar `bundled` holds to
(docs/engines.md), so it runs only when asked for.

The converted model is written once beside the model's cached directory (`<dir>/ct2/`), so it
is rebuilt whenever that directory is. Tokenization, windows for long texts, pooling and
normalization stay in xlingua (TransformerEncoder); CTranslate2 only maps token ids to the last
hidden states.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch

from xlingua.encoders.e5 import BundledTorchEncoder
from xlingua.encoders.engines import register_engine
from xlingua.io import atomic_dir

#: compute type of each path
COMPUTE = {"ct2": "float32", "int8": "int8"}
_FILES = ("model.safetensors", "tokenizer.json", "tokenizer_config.json")


def require_ct2(what: str):
    try:
        import ctranslate2
    except ImportError:
        raise ImportError(f"{what} needs ctranslate2: pip install ctranslate2") from None
    return ctranslate2


def convert_ct2(model_dir: Path, out: Path) -> Path:
    """Convert a transformers BertModel directory to CTranslate2 (fp32 weights; int8 is chosen
    when loading), atomically."""
    from ctranslate2.converters import TransformersConverter

    with atomic_dir(out) as tmp:
        src = tmp / "hf"
        src.mkdir()
        config = json.loads((model_dir / "config.json").read_text())
        # the converter asserts on a field transformers 5 no longer writes
        config.setdefault("position_embedding_type", "absolute")
        (src / "config.json").write_text(json.dumps(config))
        for name in _FILES:
            if (model_dir / name).is_file():
                os.symlink((model_dir / name).resolve(), src / name)
        model = tmp / "model"
        TransformersConverter(str(src)).convert(str(model), quantization=None)
        for f in model.iterdir():
            f.rename(tmp / f.name)
        model.rmdir()
        for f in src.iterdir():
            f.unlink()
        src.rmdir()
    return out


class CT2States:
    """Hidden states from CTranslate2 for a TransformerEncoder over a BertModel directory."""

    trainable = False  # CTranslate2 computes; the torch module only gives shapes and tokenizer

    def _start_ct2(self, path: str, threads: int | None) -> None:
        ctranslate2 = require_ct2(f"{self.name.split(':')[0]}:{path}")
        if self.layer is not None:
            raise ValueError(f"the {path} path returns the last layer only; use :torch for layer=")
        out = Path(self.path) / "ct2"
        if not (out / "model.bin").is_file():
            convert_ct2(Path(self.path), out)
        self.matmul_dtype = "int8" if COMPUTE[path] == "int8" else "fp32"
        torch_threads = torch.get_num_threads()
        self.engine = ctranslate2.Encoder(str(out), device="cpu", compute_type=COMPUTE[path],
                                          intra_threads=threads or torch_threads)
        # CTranslate2 sets the OpenMP thread count torch shares: torch keeps its own
        torch.set_num_threads(torch_threads)
        self._ct2_start = (path, threads or torch_threads)

    # the engine does not pickle (Ray, multiprocessing): a copy starts its own, with the
    # original's thread count so that its vectors are the same to the bit
    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "engine"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._start_ct2(*self._ct2_start)

    def _states(self, batch: dict, layer: int | None) -> torch.Tensor:
        mask = batch["attention_mask"]
        lengths = mask.sum(1).tolist()
        ids = [row[:n].tolist() for row, n in zip(batch["input_ids"], lengths)]
        states = torch.from_numpy(np.asarray(self.engine.forward_batch(ids).last_hidden_state))
        out = torch.zeros(mask.shape[0], mask.shape[1], states.shape[-1])
        width = min(states.shape[1], mask.shape[1])
        out[:, :width] = states[:, :width]
        return out


class BundledCT2Encoder(CT2States, BundledTorchEncoder):
    """NAME:ct2 / NAME:int8 (`model`, `alias` as BundledTorchEncoder)."""

    def __init__(self, prefix: str = "query", path: str = "ct2", threads: int | None = None, **options):
        require_ct2(f"bundled:{path}")  # before the model loads
        super().__init__(prefix=prefix, **options)
        self._start_ct2(path, threads)
        self.name = self.name.replace(":torch", f":{path}", 1)


_PIP = "pip install ctranslate2"


@register_engine("ct2", "CTranslate2's encoder, fp32 (the same vectors as torch to 1e-6)",
                 needs=("ctranslate2",), pip=_PIP)
def _ct2(**options) -> BundledCT2Encoder:
    return BundledCT2Encoder(path="ct2", **options)


@register_engine("int8", "CTranslate2 with int8 weights and activations (cosine to fp32 mean 0.998, min 0.995)",
                 needs=("ctranslate2",), pip=_PIP)
def _int8(**options) -> BundledCT2Encoder:
    return BundledCT2Encoder(path="int8", **options)
