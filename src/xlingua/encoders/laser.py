"""A BiLSTM LASER encoder trained by `xlingua laser train`: `load_encoder("laser:DIR")`.

DIR holds encoder.pt and its vocabulary: spm.model, or for a student started from a static
encoder's pieces static.json and pieces.safetensors (xlingua.encoders.static.StaticPieces)
(`laser:DIR/encoder_step400.pt` loads a snapshot of DIR).
Vectors are the max-pooled BiLSTM states, projected to the teacher's size for a distilled
student (not normalized; use cosine). Inputs are never truncated: the LSTM reads any length.
A shipped directory (`xlingua laser ship`, with manifest.json, see xlingua.encoders.manifest) is
checked against its checksums before it loads. No BiLSTM is shipped: there is no name to load one
by, only `laser:DIR`.

A student whose embedding stayed frozen at a packaged static encoder's vectors ships without
them: its encoder.pt names that encoder (by fingerprint) and keeps the four special rows and the
scale, and the rows are rebuilt from the installed static encoder on load (STATIC_EMBEDDING)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch

from xlingua.encoders.base import Encoder
from xlingua.encoders.laser_model import BiLSTMEncoder, LaserConfig, pad_batch
from xlingua.encoders.laser_vocab import load_vocab
from xlingua.encoders.manifest import verify
from xlingua.encoders.model_packages import model_dir
from xlingua.encoders.registry import register_spec


class LaserEncoder(Encoder):
    normalized = False
    by_tokens = True

    def __init__(self, path: str, threads: int | None = None, name: str | None = None):
        root, weights = Path(path), "encoder.pt"
        if root.suffix == ".pt":
            root, weights = root.parent, root.name
        self.vocab_files = vocab_files(root)
        missing = [f for f in (weights, *self.vocab_files) if not (root / f).exists()]
        if missing:
            raise FileNotFoundError(f"{path} is not a LASER model directory: missing {', '.join(missing)}")
        self.manifest = verify(root)
        self.weights = root / weights
        blob = torch.load(self.weights, map_location="cpu", weights_only=True)
        self.config = LaserConfig(**blob["config"])
        self.net = BiLSTMEncoder(self.config)
        state = blob["state"]
        if STATIC_EMBEDDING in blob:
            state = {**state, "embed.weight": referenced_embedding(blob[STATIC_EMBEDDING], self.weights)}
        self.net.load_state_dict(state)
        self.net.eval()
        self.sp = load_vocabulary(root)
        if threads:
            torch.set_num_threads(threads)
        self.path = root
        self.dim = self.net.dim
        self.name = name or f"laser:{root.name}" + ("" if weights == "encoder.pt" else f"/{weights}")

    def _sized(self, texts: list[str]) -> tuple[list[list[int]], list[int]]:
        # tokenized once. Padding costs the embedding and the pooling, and a batch runs as many
        # LSTM steps as its longest text: batches are cut by the shared rule like a transformer's
        ids = self.sp.encode(texts)
        return ids, [max(len(x), 1) for x in ids]  # an empty text runs as one EOS

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        return self._encode_items(self.sp.encode(texts), lang)

    def _encode_items(self, ids: list[list[int]], lang: str | None) -> np.ndarray:
        tokens, lengths = pad_batch(ids)
        with torch.no_grad():
            return self.net(tokens, lengths).numpy()

    def fingerprint(self) -> str:
        h = hashlib.sha256(self.weights.read_bytes())
        for name in self.vocab_files:
            h.update((self.path / name).read_bytes())
        return f"laser-{h.hexdigest()[:16]}"


#: the key of encoder.pt naming the packaged static encoder whose vectors are its embedding rows 4..
STATIC_EMBEDDING = "static_embedding"


def static_rows(static, scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """A static encoder's vectors as a student's embedding rows 4.., and the scale applied: by
    default the rows' mean norm becomes sqrt(dim), the size of the default N(0, 1)
    initialisation, so the LSTM sees inputs of the size it starts with either way."""
    vectors = torch.from_numpy(static.vectors)
    if scale is None:
        scale = (vectors.shape[1] ** 0.5) / vectors.norm(dim=1).mean()
    return vectors * scale, scale


def referenced_embedding(ref: dict, where) -> torch.Tensor:
    """The embedding of a student shipped without its static rows: the four special rows it
    stored, then the installed packaged static encoder's vectors times the stored scale."""
    from xlingua.encoders.static import PACKAGED, StaticEncoder

    name = ref["static"]
    if name not in PACKAGED:
        raise ValueError(f"{where}: its embedding refers to {name!r}, which is not a static encoder xlingua "
                         f"ships ({', '.join(PACKAGED)})")
    static = StaticEncoder(model_dir(name, "`xlingua static ship`"), name=name)
    if static.fingerprint() != ref["fingerprint"]:
        raise ValueError(f"{where}: its embedding is {name} {ref['fingerprint']}, but this installation's "
                         f"{name} is {static.fingerprint()}: install the xlingua it was shipped with")
    return torch.cat([ref["special"], static_rows(static, ref["scale"])[0]])


def vocab_files(root: Path) -> tuple[str, ...]:
    """The vocabulary files of a LASER directory."""
    import json

    from xlingua.encoders.static import CONFIG, PIECES

    if not (root / PIECES).exists():
        return ("spm.model",)
    files = (CONFIG, PIECES)
    if json.loads((root / CONFIG).read_text(encoding="utf-8")).get("tokenizer") == "local":
        files += tuple(sorted(f.name for f in root.iterdir() if f.name.startswith(("tokenizer", "special_tokens",
                                                                                     "vocab", "xlingua_normalization"))))
    return files


def load_vocabulary(root: Path):
    """SentencePiece, or a static encoder's pieces: both `.encode(texts)` and `.get_piece_size()`."""
    if vocab_files(root) == ("spm.model",):
        return load_vocab(root / "spm.model")
    from xlingua.encoders.static import StaticPieces

    return StaticPieces(root)


@register_spec("laser:PATH", "a BiLSTM LASER encoder trained by xlingua (a `laser train` run, one of its "
                              "encoder_stepN.pt, or a `laser ship` directory)")
def _laser(path: str, **options) -> LaserEncoder:
    return LaserEncoder(path, **options)
