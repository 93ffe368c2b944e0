"""Step 2: the vectors of every shard, L2-normalized, float16, in the embedding store format
(encoders.store: `shard-NNNNN.npy` + `index.json`), so a step directory is also what
`xlingua embed` writes and what `--src-embeddings` reads.

`EmbedStep` runs the encoder on each shard (local loop or Ray; each file written atomically,
so a killed run re-embeds only the shards with no file yet). `ImportStep` takes the rows of a
store `xlingua embed` wrote for the same corpus instead: no encoder runs. `ConcatStep`
combines several encoders' steps."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from xlingua.data.text import InputError
from xlingua.encoders.base import Encoder
from xlingua.encoders.concat import concat_unit
from xlingua.encoders.store import Store, StoreError, index_record, shard_name
from xlingua.mining.cache import Step, file_fingerprint, save_json, save_npy
from xlingua.similarity import normalize_rows


def load_embeddings(path) -> np.ndarray:
    """float16 file -> float32 rows, renormalized (rounding to float16 moves norms by ~1e-3),
    so inner products are exactly the cosines of the stored vectors."""
    return normalize_rows(np.load(path).astype(np.float32))


def shard_loader(step_dir: str | Path):
    """i -> the normalized float32 rows of shard i of an embed, import or concat step."""
    return lambda i: load_embeddings(Path(step_dir) / shard_name(i))


def resolve_encoder(encoder: Encoder | str) -> Encoder:
    if isinstance(encoder, Encoder):
        return encoder
    from xlingua.encoders.loading import load_encoder

    return load_encoder(encoder)


class _VectorStep(Step):
    """A step whose output is one normalized float16 store shard per corpus shard."""

    def shard_path(self, i: int) -> Path:
        return self.dir / shard_name(i)

    def load(self, i: int) -> np.ndarray:
        return load_embeddings(self.shard_path(i))

    def save_shard(self, i: int, vectors: np.ndarray) -> None:
        save_npy(self.shard_path(i), normalize_rows(vectors).astype(np.float16))

    def finish_store(self, n_shards: int, model: str) -> dict:
        rows = [int(np.load(self.shard_path(i), mmap_mode="r").shape[0]) for i in range(n_shards)]
        dim = int(np.load(self.shard_path(0), mmap_mode="r").shape[1])
        save_json(self.dir / "index.json", index_record(rows, dim, "float16", model))
        return self.finish({"dim": dim, "n_shards": n_shards, "model": model})


@dataclasses.dataclass(frozen=True)
class EmbedConfig:
    shards_key: str
    shards_dir: str
    n_shards: int
    lang: str
    encoder: str  # the encoder's fingerprint
    batch_size: int = 64


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


class EmbedStep(_VectorStep):
    name = "embed"
    version = 2  # v2: store format (shard-NNNNN.npy + index.json)

    def key_config(self):
        # the batch size moves no vector (the bundled paths batch by tokens and ignore it)
        return dataclasses.replace(self.config, shards_dir="", batch_size=0)

    def run(self, encoder, runner) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        todo = [i for i in range(cfg.n_shards) if not self.shard_path(i).exists()]
        bars = runner.local and runner.show_progress  # a Ray worker's bars would land in its log
        runner.map(embed_shard, [(cfg.shards_dir, i, str(self.shard_path(i)), encoder, cfg.lang,
                                  cfg.batch_size, bars) for i in todo],
                   label=f"embed {cfg.lang}")
        return self.finish_store(cfg.n_shards, cfg.encoder)


@dataclasses.dataclass(frozen=True)
class ImportConfig:
    shards_key: str
    shards_dir: str
    shard_sizes: tuple
    lines: int           # lines of the corpus file, blank ones included
    has_ids: bool
    store_dir: str
    store_files: tuple   # content fingerprints of the store's index and shards


def import_config(shard_step, store_dir: str | Path) -> ImportConfig:
    store = _open(store_dir)
    files = [store.path / "index.json"] + [store.path / f for f in store.files]
    meta = shard_step.meta()
    return ImportConfig(shard_step.key, str(shard_step.dir), tuple(meta["shards"]), int(meta["lines"]),
                        bool(meta["has_ids"]), str(store.path), tuple(file_fingerprint(p) for p in files))


def _open(store_dir) -> Store:
    try:
        return Store(store_dir)
    except StoreError as exc:
        raise InputError(str(exc)) from None


class ImportStep(_VectorStep):
    """The corpus's sentences' rows of a store written by `xlingua embed` for the same file:
    row = line number - 1, or, for a corpus of id<TAB>sentence lines, the row of the same id
    (embed it with `--ids`). Blank and deduplicated lines are skipped as the shard step did."""

    name = "import"

    def key_config(self):
        return dataclasses.replace(self.config, shards_dir="", store_dir="")

    def run(self) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        store = _open(cfg.store_dir)
        if store.rows != cfg.lines:
            raise InputError(f"{store.path} holds {store.rows:,} rows but the corpus has {cfg.lines:,} "
                             "lines: embed the same file (one row per line)")
        row_of_id = None
        if cfg.has_ids:
            if not store.has_ids():
                raise InputError(f"{store.path}: the corpus has id<TAB>sentence lines, the store no ids; "
                                 "write it with `xlingua embed --ids`")
            row_of_id = {}
            for row, sid in enumerate(store.ids()):
                row_of_id.setdefault(sid, row)
        self.dir.mkdir(parents=True, exist_ok=True)
        for i in range(len(cfg.shard_sizes)):
            if self.shard_path(i).exists():
                continue
            ids = (Path(cfg.shards_dir) / f"ids_{i:05d}.txt").read_text(encoding="utf-8").split("\n")[:-1]
            rows = ([row_of_id[s] for s in ids] if row_of_id is not None
                    else [int(s) - 1 for s in ids])  # without ids the shard step's id is the line number
            vecs = store.rows_at(np.array(rows, dtype=np.int64))
            if not np.all(np.isfinite(vecs)):
                raise InputError(f"{store.path}: non-finite vectors among the rows of shard {i}")
            self.save_shard(i, vecs)
        return self.finish_store(len(cfg.shard_sizes), store.model)


@dataclasses.dataclass(frozen=True)
class ConcatConfig:
    embed_keys: tuple
    embed_dirs: tuple
    n_shards: int


class ConcatStep(_VectorStep):
    """Several encoders as one: per shard, the unit vectors of each encoder side by side,
    scaled by 1/sqrt(#encoders), so inner product = mean of the encoders' cosines and every
    score downstream (margins, CSLS, in-batch) works on that mean. Reuses each encoder's
    cached shards."""

    name = "concat"
    version = 2  # v2: store format

    def key_config(self):
        return dataclasses.replace(self.config, embed_dirs=())

    def run(self, model: str) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        for i in range(cfg.n_shards):
            if not self.shard_path(i).exists():
                parts = [shard_loader(d)(i) for d in cfg.embed_dirs]
                save_npy(self.shard_path(i), concat_unit(parts).astype(np.float16))
        return self.finish_store(cfg.n_shards, model)
