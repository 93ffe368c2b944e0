"""Step 2: embed each shard, L2-normalized, stored as float16 (`emb_NNNNN.npy`).

Shards are independent tasks (local loop or Ray); each file is written atomically, so a
killed run re-embeds only the shards that have no file yet."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from xlingua.encoders.base import Encoder
from xlingua.encoders.concat import concat_unit
from xlingua.mining.cache import Step, save_npy
from xlingua.similarity import normalize_rows


@dataclasses.dataclass(frozen=True)
class EmbedConfig:
    shards_key: str
    shards_dir: str
    n_shards: int
    lang: str
    encoder: str  # the encoder's fingerprint
    batch_size: int = 64


def load_embeddings(path) -> np.ndarray:
    """float16 file -> float32 rows, renormalized (rounding to float16 moves norms by ~1e-3),
    so inner products are exactly the cosines of the stored vectors."""
    return normalize_rows(np.load(path).astype(np.float32))


def resolve_encoder(encoder: Encoder | str) -> Encoder:
    if isinstance(encoder, Encoder):
        return encoder
    from xlingua.encoders.loading import load_encoder

    return load_encoder(encoder)


def embed_shard(shard_dir: str, i: int, out_path: str, encoder, lang: str, batch_size: int,
                show_progress: bool = False) -> str:
    """Embed shard i of a ShardStep directory into out_path (skipped if it exists)."""
    out = Path(out_path)
    if out.exists():
        return str(out)
    encoder = resolve_encoder(encoder)
    texts = (Path(shard_dir) / f"text_{i:05d}.txt").read_text(encoding="utf-8").split("\n")[:-1]
    vecs = encoder.encode(texts, lang=lang, batch_size=batch_size, show_progress=show_progress)
    if not np.all(np.isfinite(vecs)):
        raise ValueError(f"encoder {encoder.name} returned non-finite vectors for shard {i}")
    save_npy(out, normalize_rows(vecs).astype(np.float16))
    return str(out)


class EmbedStep(Step):
    name = "embed"

    def key_config(self):
        return dataclasses.replace(self.config, shards_dir="")

    def shard_path(self, i: int) -> Path:
        return self.dir / f"emb_{i:05d}.npy"

    def load(self, i: int) -> np.ndarray:
        return load_embeddings(self.shard_path(i))

    def run(self, encoder, runner) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        todo = [i for i in range(cfg.n_shards) if not self.shard_path(i).exists()]
        runner.map(embed_shard, [(cfg.shards_dir, i, str(self.shard_path(i)), encoder, cfg.lang,
                                  cfg.batch_size, runner.local) for i in todo],
                   label=f"embed {cfg.lang}")
        dim = int(np.load(self.shard_path(0), mmap_mode="r").shape[1])
        return self.finish({"dim": dim, "n_shards": cfg.n_shards})


@dataclasses.dataclass(frozen=True)
class ConcatConfig:
    embed_keys: tuple
    embed_dirs: tuple
    n_shards: int


class ConcatStep(Step):
    """Several encoders as one: per shard, the unit vectors of each encoder side by side,
    scaled by 1/sqrt(#encoders), so inner product = mean of the encoders' cosines and every
    score downstream (margins, CSLS, in-batch) works on that mean. Reuses each encoder's
    cached shards."""

    name = "concat"

    def key_config(self):
        return dataclasses.replace(self.config, embed_dirs=())

    def shard_path(self, i: int) -> Path:
        return self.dir / f"emb_{i:05d}.npy"

    def load(self, i: int) -> np.ndarray:
        return load_embeddings(self.shard_path(i))

    def run(self) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        for i in range(cfg.n_shards):
            if not self.shard_path(i).exists():
                parts = [load_embeddings(Path(d) / f"emb_{i:05d}.npy") for d in cfg.embed_dirs]
                save_npy(self.shard_path(i), concat_unit(parts).astype(np.float16))
        dim = int(np.load(self.shard_path(0), mmap_mode="r").shape[1])
        return self.finish({"dim": dim, "n_shards": cfg.n_shards})
