"""An on-disk embedding cache keyed by (encoder fingerprint, text).

API (all that callers need):

    from xlingua.encoders.cache import CachedEncoder, EmbeddingCache

    enc = CachedEncoder(load_encoder("use"))      # an Encoder: same encode() signature
    vecs = enc.encode(texts, show_progress=True)  # only texts never seen before are embedded

    cache = EmbeddingCache(encoder.fingerprint())  # lower level
    found = cache.get(texts)        # {text: float32 row} for the texts already stored
    cache.put(texts, vectors)       # store rows (first writer wins)

One SQLite file per fingerprint under `$XLINGUA_HOME/embeddings/` (or `cache_dir`), a row per
distinct text holding its float32 vector. SQLite's locking makes it safe for several
processes at once (WAL journal, busy timeout), and rows are committed after every embedded
chunk, so a killed run keeps what it has embedded and resumes from there. Opening a file is
serialized by a lock file beside it: two connections switching a new file to WAL at once can
each hold a read lock the other waits on, and SQLite then answers "database is locked" at once,
without waiting out the busy timeout.

If an encoder's vectors depend on the `lang` argument it should set `uses_lang = True`; the
language is then part of the key. No encoder in xlingua does today.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import re
import sqlite3
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from xlingua.encoders.base import Encoder
from xlingua.paths import xlingua_home

_SQL_VARS = 500  # keys per SELECT ... IN (...), under SQLite's variable limit


def default_cache_dir() -> Path:
    return xlingua_home() / "embeddings"


def _key(text: str, lang: str | None) -> bytes:
    data = text if lang is None else f"{lang}\x00{text}"
    return hashlib.blake2b(data.encode("utf-8"), digest_size=16).digest()


@contextlib.contextmanager
def _exclusive(lock_path: Path):
    """Hold an exclusive lock on `lock_path` (created if absent) across processes."""
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class EmbeddingCache:
    """Rows of one encoder (one fingerprint) in one SQLite file."""

    def __init__(self, fingerprint: str, cache_dir: str | Path | None = None):
        self.fingerprint = fingerprint
        root = Path(cache_dir) if cache_dir else default_cache_dir()
        root.mkdir(parents=True, exist_ok=True)
        # Readable file name plus a hash, so different fingerprints never share a file.
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", fingerprint)[:60]
        digest = hashlib.sha256(fingerprint.encode("utf-8")).hexdigest()[:12]
        self.path = root / f"{safe}-{digest}.sqlite"
        with _exclusive(self.path.with_name(self.path.name + ".lock")):
            self._db = sqlite3.connect(self.path, timeout=120, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
            self._db.execute("CREATE TABLE IF NOT EXISTS emb (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
            stored = self._db.execute("SELECT v FROM meta WHERE k='fingerprint'").fetchone()[0]
        if stored != fingerprint:
            raise ValueError(f"embedding cache {self.path} belongs to fingerprint {stored!r}, "
                             f"not {fingerprint!r}")

    def get(self, texts: Iterable[str], lang: str | None = None) -> dict[str, np.ndarray]:
        """Stored rows of the given texts (texts not stored are absent from the result)."""
        by_key = {_key(t, lang): t for t in texts}
        keys = list(by_key)
        found = {}
        for start in range(0, len(keys), _SQL_VARS):
            chunk = keys[start : start + _SQL_VARS]
            marks = ",".join("?" * len(chunk))
            for key, blob in self._db.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", chunk):
                found[by_key[key]] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, texts: Sequence[str], vectors: np.ndarray, lang: str | None = None) -> None:
        """Store one row per text, in one transaction; a text already stored keeps its row."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(texts) != len(vectors):
            raise ValueError(f"put() got {len(texts)} texts but {len(vectors)} vectors")
        rows = [(_key(t, lang), v.tobytes()) for t, v in zip(texts, vectors)]
        with self._db:  # one transaction
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR IGNORE INTO emb VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]

    def close(self) -> None:
        self._db.close()


class CachedEncoder(Encoder):
    """Wraps an encoder; `encode` embeds only texts the cache lacks, in chunks of
    `chunk_size` texts committed one by one (so progress survives a kill)."""

    def __init__(self, encoder: Encoder, cache_dir: str | Path | None = None, chunk_size: int = 512):
        self.inner = encoder
        self.name = encoder.name
        self.dim = encoder.dim
        self.normalized = encoder.normalized
        self.chunk_size = chunk_size
        self.cache = EmbeddingCache(encoder.fingerprint(), cache_dir)

    def fingerprint(self) -> str:
        return self.inner.fingerprint()

    def encode(self, texts: Sequence[str], lang: str | None = None, batch_size: int = 64,
               show_progress: bool = False) -> np.ndarray:
        """The inner encoder's rows, embedding only the texts the cache lacks (each distinct
        text once) and storing them chunk by chunk."""
        texts = list(texts)
        key_lang = lang if getattr(self.inner, "uses_lang", False) else None
        found = self.cache.get(texts, key_lang)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            progress = _Progress(len(missing), self.name) if show_progress else None
            try:
                for start in range(0, len(missing), self.chunk_size):
                    chunk = missing[start : start + self.chunk_size]
                    vecs = self.inner.encode(chunk, lang=lang, batch_size=batch_size)
                    self.cache.put(chunk, vecs, key_lang)
                    found.update(zip(chunk, np.asarray(vecs, dtype=np.float32)))
                    if progress:
                        progress.advance(len(chunk))
            finally:
                if progress:
                    progress.stop()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = found[t]
        return out

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        return self.encode(texts, lang=lang)


class _Progress:
    def __init__(self, total: int, label: str):
        from xlingua.encoders.base import _progress

        self._bar, self._task = _progress(total, f"{label} (uncached)")

    def advance(self, n: int) -> None:
        self._bar.update(self._task, advance=n)

    def stop(self) -> None:
        self._bar.stop()
