"""Step 2: the vectors of every shard, L2-normalized, float16, in the embedding store format
(encoders.store: `shard-NNNNN.npy` + `index.json`), so a step directory is also what
`xlingua embed` writes and what `--src-embeddings` reads.

`EmbedStep` runs the encoder on each shard (local loop or Ray; each file written atomically,
so a killed run re-embeds only the shards with no file yet). `ImportStep` takes the rows of a
store `xlingua embed` wrote for the same corpus instead: no encoder runs. `ConcatStep`
combines several encoders' steps. Each gives the same `Vectors` to the steps below."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from xlingua.data.text import InputError
from xlingua.encoders.base import Encoder
from xlingua.encoders.concat import concat_unit
from xlingua.encoders.store import Store, StoreError, index_record, load_embeddings, shard_name
from xlingua.mining.cache import file_fingerprint, save_json, save_npy
from xlingua.mining.corpus import ShardedCorpus, Shards
from xlingua.mining.step import Output, Step, path_field, unkeyed, upstream
from xlingua.similarity import normalize_rows


def unit_rows(rows: np.ndarray) -> np.ndarray:
    """Stored float16 rows -> float32, renormalized (rounding to float16 moves norms by ~1e-3),
    so inner products are exactly the cosines of the stored vectors."""
    return normalize_rows(rows.astype(np.float32))


def shard_loader(step_dir: str | Path):
    """i -> the normalized float32 rows of shard i of an embed, import or concat step."""
    return lambda i: unit_rows(load_embeddings(Path(step_dir) / shard_name(i)))


def resolve_encoder(encoder: Encoder | str) -> Encoder:
    if isinstance(encoder, Encoder):
        return encoder
    from xlingua.encoders.loading import load_encoder

    return load_encoder(encoder)


@dataclasses.dataclass(frozen=True)
class Vectors(Output):
    """Unit vectors, one store shard per corpus shard (of `sizes` rows each)."""
    dim: int
    model: str  # the fingerprint of the encoder(s) that made them
    sizes: tuple

    def load(self, i: int) -> np.ndarray:
        return shard_loader(self.dir)(i)

    def summary(self) -> dict:
        return {"dim": self.dim, "n_shards": len(self.sizes), "model": self.model}


class _VectorStep(Step):
    """A step whose output is one normalized float16 store shard per corpus shard."""

    output_type = Vectors

    @property
    def sizes(self) -> tuple:
        raise NotImplementedError

    def items(self):
        return range(len(self.sizes))

    def item_done(self, i: int) -> bool:
        return self.shard_path(i).exists()

    def item_rows(self, i: int) -> int:
        return int(self.sizes[i])

    def shard_path(self, i: int) -> Path:
        return self.dir / shard_name(i)

    def save_shard(self, i: int, vectors: np.ndarray) -> None:
        save_npy(self.shard_path(i), normalize_rows(vectors).astype(np.float16))

    def store(self, model: str) -> Vectors:
        """The store's index.json (so the directory reads as `xlingua embed`'s output) and the Output."""
        dim = int(np.load(self.shard_path(0), mmap_mode="r").shape[1])
        save_json(self.dir / "index.json", index_record(list(self.sizes), dim, "float16", model))
        return self.output({"dim": dim, "model": model})

    def output(self, summary: dict) -> Vectors:
        return Vectors(self.key, str(self.dir), summary["dim"], summary["model"], self.sizes)


@dataclasses.dataclass(frozen=True)
class EmbedConfig:
    shards: Shards = upstream()
    encoder: str  # the encoder's fingerprint
    # the batch size moves no vector (the bundled paths batch by tokens and ignore it)
    batch_size: int = unkeyed(64)


class EmbedStep(_VectorStep):
    """Each shard through the encoder (its shards are the items: local loop or Ray)."""

    name = "embed"
    spread = True
    key_order = ("shards_key", "shards_dir", "n_shards", "lang", "encoder", "batch_size")
    version = 2  # v2: store format (shard-NNNNN.npy + index.json)

    def __init__(self, config: EmbedConfig, workdir, encoder: Encoder | str):
        super().__init__(config, workdir)
        self.encoder = encoder

    @property
    def sizes(self) -> tuple:
        return self.config.shards.sizes

    def old_key_fields(self) -> dict:
        shards = self.config.shards
        return {"shards_dir": "", "n_shards": len(shards.sizes), "lang": shards.lang}

    def run(self, i: int, progress: bool) -> None:
        shards = self.config.shards
        embed_shard(shards.dir, i, str(self.shard_path(i)), self.encoder, shards.lang,
                    self.config.batch_size, progress)

    def summarize(self) -> Vectors:
        return self.store(self.config.encoder)


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


@dataclasses.dataclass(frozen=True)
class ImportConfig:
    shards: Shards = upstream()
    store_dir: str = path_field()
    store_files: tuple  # content fingerprints of the store's index and shards


def import_config(shards: Shards, store_dir: str | Path) -> ImportConfig:
    store = _open(store_dir)
    files = [store.path / "index.json"] + [store.path / f for f in store.files]
    return ImportConfig(shards, str(store.path), tuple(file_fingerprint(p) for p in files))


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
    key_order = ("shards_key", "shards_dir", "shard_sizes", "lines", "has_ids", "store_dir", "store_files")

    @property
    def sizes(self) -> tuple:
        return self.config.shards.sizes

    def old_key_fields(self) -> dict:
        shards = self.config.shards
        return {"shards_dir": "", "shard_sizes": shards.sizes, "lines": shards.lines,
                "has_ids": shards.has_ids}

    def items(self):
        self._check(_open(self.config.store_dir))  # a store that does not fit fails before any shard
        return super().items()

    def run(self, i: int, progress: bool) -> None:
        store, row_of_id = self._checked_store()
        ids = ShardedCorpus(self.config.shards).shard_ids(i)
        rows = ([row_of_id[s] for s in ids] if row_of_id is not None
                else [int(s) - 1 for s in ids])  # without ids the shard step's id is the line number
        vecs = store.rows_at(np.array(rows, dtype=np.int64))
        if not np.all(np.isfinite(vecs)):
            raise InputError(f"{store.path}: non-finite vectors among the rows of shard {i}")
        self.save_shard(i, vecs)

    def summarize(self) -> Vectors:
        return self.store(self._checked_store()[0].model)

    def _checked_store(self) -> tuple[Store, dict | None]:
        if getattr(self, "_store", None) is None:
            self._store = self._check(_open(self.config.store_dir))
        return self._store

    def _check(self, store: Store) -> tuple[Store, dict | None]:
        shards = self.config.shards
        if store.rows != shards.lines:
            raise InputError(f"{store.path} holds {store.rows:,} rows but the corpus has {shards.lines:,} "
                             "lines: embed the same file (one row per line)")
        if not shards.has_ids:
            return store, None
        if not store.has_ids():
            raise InputError(f"{store.path}: the corpus has id<TAB>sentence lines, the store no ids; "
                             "write it with `xlingua embed --ids`")
        row_of_id = {}
        for row, sid in enumerate(store.ids()):
            row_of_id.setdefault(sid, row)
        return store, row_of_id


@dataclasses.dataclass(frozen=True)
class ConcatConfig:
    embed: tuple = upstream()  # the Vectors of each encoder, same corpus


class ConcatStep(_VectorStep):
    """Several encoders as one: per shard, the unit vectors of each encoder side by side,
    scaled by 1/sqrt(#encoders), so inner product = mean of the encoders' cosines and every
    score downstream (margins, CSLS, in-batch) works on that mean. Reuses each encoder's
    cached shards."""

    name = "concat"
    key_order = ("embed_keys", "embed_dirs", "n_shards")
    version = 2  # v2: store format

    @property
    def sizes(self) -> tuple:
        return self.config.embed[0].sizes

    def old_key_fields(self) -> dict:
        return {"embed_dirs": (), "n_shards": len(self.sizes)}

    def run(self, i: int, progress: bool) -> None:
        parts = [vectors.load(i) for vectors in self.config.embed]
        save_npy(self.shard_path(i), concat_unit(parts).astype(np.float16))

    def summarize(self) -> Vectors:
        return self.store(",".join(vectors.model for vectors in self.config.embed))
