"""A BiLSTM LASER encoder trained by `xlingua laser train`: `load_encoder("laser:DIR")`.

DIR holds encoder.pt and spm.model (`laser:DIR/encoder_step400.pt` loads a snapshot of DIR).
Vectors are the max-pooled BiLSTM states, projected to the teacher's size for a distilled
student (not normalized; use cosine). Inputs are never truncated: the LSTM reads any length.
A shipped directory (with manifest.json, see xlingua.encoders.manifest) is checked against its
checksums before it loads; `load_encoder("laser-small")` loads the one shipped in the package."""
from __future__ import annotations

import hashlib
from functools import partial
from pathlib import Path

import numpy as np
import torch

from xlingua.encoders.base import Encoder
from xlingua.encoders.laser_model import BiLSTMEncoder, LaserConfig, pad_batch
from xlingua.encoders.laser_vocab import load_vocab
from xlingua.encoders.manifest import packaged_dir, verify
from xlingua.encoders.registry import register_spec


class LaserEncoder(Encoder):
    normalized = False

    def __init__(self, path: str, threads: int | None = None, name: str | None = None):
        root, weights = Path(path), "encoder.pt"
        if root.suffix == ".pt":
            root, weights = root.parent, root.name
        missing = [f for f in (weights, "spm.model") if not (root / f).exists()]
        if missing:
            raise FileNotFoundError(f"{path} is not a LASER model directory: missing {', '.join(missing)}")
        self.manifest = verify(root)
        self.weights = root / weights
        blob = torch.load(self.weights, map_location="cpu", weights_only=True)
        self.config = LaserConfig(**blob["config"])
        self.net = BiLSTMEncoder(self.config)
        self.net.load_state_dict(blob["state"])
        self.net.eval()
        self.sp = load_vocab(root / "spm.model")
        if threads:
            torch.set_num_threads(threads)
        self.path = root
        self.dim = self.net.dim
        self.name = name or f"laser:{root.name}" + ("" if weights == "encoder.pt" else f"/{weights}")

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        tokens, lengths = pad_batch(self.sp.encode(texts))
        with torch.no_grad():
            return self.net(tokens, lengths).numpy()

    def fingerprint(self) -> str:
        h = hashlib.sha256(self.weights.read_bytes())
        h.update((self.path / "spm.model").read_bytes())
        return f"laser-{h.hexdigest()[:16]}"


PACKAGED = ("laser-small",)  # BiLSTM students shipped in xlingua/models/


@register_spec("laser:PATH", "a BiLSTM LASER encoder trained by xlingua")
def _laser(path: str, **options) -> LaserEncoder:
    return LaserEncoder(path, **options)


def _packaged(name: str, **options) -> LaserEncoder:
    return LaserEncoder(str(packaged_dir(name, "`xlingua laser ship`")), name=name, **options)


for _name in PACKAGED:
    register_spec(_name, "the BiLSTM student distilled from bundled, shipped inside the package "
                         "(checksum-verified): for CPU-bound work on huge corpora")(partial(_packaged, _name))
