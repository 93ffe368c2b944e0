"""Meaning embeddings on top of any frozen encoder: `load_encoder("BASE+meaning:PATH")`.

PATH is a directory written by `xlingua meaning train` (or the model.pt file in it). The
vectors are MLP_M(base vector), L2-normalized (Tiyajamorn et al. 2021). The base encoder is
frozen, so its vectors go through the shared embedding cache (cache_base=False turns that off):
evaluating several meaning models, or the base itself, embeds each text once.

A meaning model shipped for a named base is the model `meaning-<BASE>` of an installed model
package (model.pt and manifest.json, written by `xlingua meaning ship`; model_packages.py) and
loads as `load_encoder("BASE+meaning")`; its checksum is verified before it loads."""
from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from xlingua.encoders import loading
from xlingua.encoders.base import Encoder
from xlingua.encoders.cache import CachedEncoder
from xlingua.encoders.meaning_mlp import MeaningModel
from xlingua.encoders.registry import register_spec


def shipped_meaning_dir(base: str) -> Path:
    """The directory of the meaning model shipped for base spec `base`."""
    from xlingua.encoders.model_packages import model_dir

    if not re.fullmatch(r"[A-Za-z0-9_.-]+", base):
        raise ValueError(f"{base}+meaning: only a named base model has a meaning model shipped with xlingua; "
                         f"for a trained one give {base}+meaning:PATH")
    try:
        return model_dir(f"meaning-{base}", build=f"`xlingua meaning ship RUN_DIR --base {base}`")
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{base}+meaning: {e}") from None


class MeaningEncoder(Encoder):
    normalized = True

    def __init__(self, base_encoder: Encoder, path: str, cache_base: bool = True):
        file = Path(path)
        if file.is_dir():
            file = file / "model.pt"
        if not file.exists():
            raise FileNotFoundError(f"no meaning model at {path} (expected a directory with model.pt, or the file)")
        from xlingua.encoders.manifest import same_vectors, verify

        self.manifest = verify(file.parent) if file.name == "model.pt" else None  # a shipped copy: checksums
        if cache_base and not isinstance(base_encoder, CachedEncoder):
            base_encoder = CachedEncoder(base_encoder)
        self.base = base_encoder
        self.model = MeaningModel.load(file)
        cfg = self.model.config
        if cfg.dim != base_encoder.dim:
            raise ValueError(f"meaning model {file} expects {cfg.dim}-d vectors from {cfg.base or 'its base'}, "
                             f"but {base_encoder.name} gives {base_encoder.dim}-d")
        if cfg.base_fingerprint and not same_vectors(cfg.base_fingerprint, base_encoder.fingerprint()):
            warnings.warn(f"meaning model {file} was trained on {cfg.base} ({cfg.base_fingerprint}); "
                          f"now applied to {base_encoder.name} ({base_encoder.fingerprint()})")
        self.path = str(file)
        self.dim = cfg.dim
        self.name = f"{base_encoder.name}+meaning"

    def project(self, vectors: np.ndarray) -> np.ndarray:
        """Meaning vectors from base vectors (lets callers reuse cached base embeddings)."""
        with torch.no_grad():
            m = self.model.meaning(torch.from_numpy(np.asarray(vectors, dtype=np.float32)))
            m = torch.nn.functional.normalize(m, dim=-1)
        return m.numpy()

    def encode(self, texts: Sequence[str], lang: str | None = None, batch_size: int = 64,
               show_progress: bool = False) -> np.ndarray:
        # The base encoder does the batching and the progress bar; the MLP is cheap.
        return self.project(self.base.encode(texts, lang=lang, batch_size=batch_size, show_progress=show_progress))

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        return self.project(self.base._encode_batch(texts, lang))

    def fingerprint(self) -> str:
        import hashlib

        digest = hashlib.sha256(Path(self.path).read_bytes()).hexdigest()[:16]
        return f"{self.base.fingerprint()}+meaning-{digest}"


@register_spec("BASE+meaning:PATH", "meaning embeddings (Tiyajamorn et al. 2021) on top of encoder BASE")
def _meaning(base: str, path: str, **options) -> MeaningEncoder:
    return MeaningEncoder(loading.load_encoder(base, **options), path)


@register_spec("BASE+meaning", "the meaning model shipped for BASE (e.g. bundled+meaning): "
               "reference-free QE out of the box", package="meaning-*")
def _shipped_meaning(base: str, **options) -> MeaningEncoder:
    path = shipped_meaning_dir(base)  # before loading the base: a missing one fails at once
    return MeaningEncoder(loading.load_encoder(base, **options), str(path))
