"""`xlingua embed`: text files in, one embedding row per input line out.

Two output forms:
- `OUT.npy`: one array (n, dim). Lines are counted (and validated) first, then rows are written
  into a memory-mapped temp file `.OUT.npy.partial-PID` (its disk space reserved up front, so a
  full disk is an error, not a SIGBUS) and renamed to OUT.npy only when every row is there: an
  interrupted run never leaves a complete-looking OUT.npy, and the next run removes the
  partials of dead processes.
- `OUT/` with `shard_size=N`: shards `shard-00000.npy` of N rows, each written atomically,
  and `index.json` written last (its presence means the job is complete). Rerunning the same
  command keeps finished shards and embeds only the rest; `job.json` records the job so that a
  rerun with other inputs, model or settings is refused instead of mixing rows.

Memory stays bounded: lines are read as a stream and embedded `buffer_lines` at a time (the
encoder sorts each buffer by length so batches carry little padding).
"""
from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Iterator

import numpy as np

from xlingua.data.text import DEFAULT_MAX_CHARS, ERRORS_HINT, InputError, Line, check_readable, read_lines, spool_stdin
from xlingua.encoders.base import Encoder
from xlingua.encoders.store import FORMAT, INDEX, Store, StoreError, ids_name, index_record, shard_name
from xlingua.io import (atomic_open, atomic_path, check_writable, open_memmap, partial_name,
                        remove_stale_partials, save_npy, write_json, write_text)
from xlingua.data.langs import normalize_lang
from xlingua.progress import progress_bar

DTYPES = ("float32", "float16")
JOB = "job.json"


@dataclass
class EmbedConfig:
    inputs: list[str]
    output: str
    lang: str | None = None
    dtype: str = "float32"
    batch_size: int | None = None  # None: the encoder's own batching
    shard_size: int | None = None
    buffer_lines: int = 50_000
    errors: str = "strict"
    max_chars: int | None = DEFAULT_MAX_CHARS
    ids: bool = False
    show_progress: bool = True

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {self.dtype!r}")
        if self.shard_size is not None and self.shard_size < 1:
            raise ValueError("shard_size must be at least 1")
        if (self.batch_size is not None and self.batch_size < 1) or self.buffer_lines < 1:
            raise ValueError("batch_size and buffer_lines must be at least 1")
        if self.lang is not None:
            normalize_lang(self.lang)  # "klingon" or "english" is an error, not a silent no-op


@dataclass
class EmbedResult:
    output: Path
    rows: int
    dim: int
    dtype: str
    shards_reused: int = 0
    shards: list[str] = field(default_factory=list)


def embed_files(encoder: Encoder, config: EmbedConfig) -> EmbedResult:
    """Run one embedding job (see the module docstring for the output forms)."""
    check_readable(config.inputs)
    check_output(config)
    if config.shard_size:
        return _embed_sharded(encoder, config)
    return _embed_single(encoder, config)


def check_output(config: EmbedConfig) -> None:
    """Refuse an output that cannot be written before any model runs."""
    if not config.shard_size and not config.output.endswith(".npy"):
        raise InputError(f"{config.output}: output must end in .npy, or pass --shard-size N "
                         "to write a sharded directory")
    check_writable(config.output, is_dir=bool(config.shard_size))


def _reader(config: EmbedConfig, inputs: list[str] | None = None) -> Iterator[Line]:
    return read_lines(inputs or config.inputs, errors=config.errors, max_chars=config.max_chars,
                      ids=config.ids, hint=ERRORS_HINT)


def _embed_chunk(encoder: Encoder, lines: list[Line], config: EmbedConfig) -> np.ndarray:
    options = {} if config.batch_size is None else {"batch_size": config.batch_size}
    vecs = encoder.encode([line.text for line in lines], lang=config.lang, **options)
    if vecs.shape != (len(lines), encoder.dim):
        raise RuntimeError(f"encoder {encoder.name} returned {vecs.shape} for {len(lines)} lines")
    return vecs.astype(config.dtype, copy=False)


def _chunks(lines: Iterator[Line], size: int) -> Iterator[list[Line]]:
    while chunk := list(islice(lines, size)):
        yield chunk


def _embed_single(encoder: Encoder, config: EmbedConfig) -> EmbedResult:
    out = Path(config.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(out.parent)
    inputs = list(config.inputs)
    ids_path = out.with_name(f"{out.stem}.ids.txt")
    with contextlib.ExitStack() as stack:
        if "-" in inputs:  # stdin is read twice (count, embed): keep a copy on disk
            spooled = partial_name(out.with_name(out.name + ".stdin"))
            stack.callback(spooled.unlink, missing_ok=True)
            inputs[inputs.index("-")] = spool_stdin(str(spooled))
        progress = stack.enter_context(_Progress(config.show_progress, encoder.name))
        n = progress.count(_reader(config, inputs))
        tmp = stack.enter_context(atomic_path(out))
        ids_file = stack.enter_context(atomic_open(ids_path)) if config.ids else None
        arr = open_memmap(tmp, config.dtype, (n, encoder.dim))
        row = 0
        for chunk in _chunks(_reader(config, inputs), config.buffer_lines):
            if row + len(chunk) > n:
                raise InputError("input changed while it was being read (more lines than counted)")
            arr[row : row + len(chunk)] = _embed_chunk(encoder, chunk, config)
            if ids_file:
                ids_file.writelines(f"{line.id}\n" for line in chunk)
            row += len(chunk)
            progress.advance(len(chunk))
        if row != n:
            raise InputError(f"input changed while it was being read ({row} lines, {n} counted)")
        arr.flush()
        del arr
    return EmbedResult(out, n, encoder.dim, config.dtype, shards=[out.name])


def _job_record(encoder: Encoder, config: EmbedConfig) -> dict:
    inputs = []
    for path in config.inputs:
        if path == "-":
            inputs.append({"path": "-"})
        else:
            st = os.stat(path)
            inputs.append({"path": os.path.abspath(path), "size": st.st_size, "mtime": int(st.st_mtime)})
    return {"format": FORMAT, "model": encoder.fingerprint(), "dim": encoder.dim,
            "dtype": config.dtype, "shard_size": config.shard_size, "lang": config.lang,
            "errors": config.errors, "max_chars": config.max_chars, "ids": config.ids,
            "inputs": inputs}


def _embed_sharded(encoder: Encoder, config: EmbedConfig) -> EmbedResult:
    out = Path(config.output)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a directory (a sharded output is a directory)")
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(out)
    job = _job_record(encoder, config)
    job_path = out / JOB
    if job_path.exists():
        old = json.loads(job_path.read_text(encoding="utf-8"))
        if old != job:
            raise InputError(f"{out} holds a different job (other inputs, model or settings); "
                             "remove it or choose another output")
        if "-" in config.inputs:
            raise InputError(f"{out}: a run reading stdin cannot be resumed; remove the directory")
        if (out / INDEX).exists():
            index = json.loads((out / INDEX).read_text(encoding="utf-8"))
            return EmbedResult(out, index["rows"], index["dim"], index["dtype"],
                               shards_reused=len(index["shards"]),
                               shards=[s["file"] for s in index["shards"]])
    else:
        write_json(job_path, job)

    size = config.shard_size
    shards, reused, rows = [], 0, 0
    with _Progress(config.show_progress, encoder.name) as progress:
        total = None if "-" in config.inputs else progress.count(_reader(config))
        lines = _reader(config)
        for k, shard_lines in enumerate(_chunks(lines, size)):
            name = shard_name(k)
            path = out / name
            if path.exists():
                done = np.load(path, mmap_mode="r")
                if done.shape != (len(shard_lines), encoder.dim):
                    raise InputError(f"{path}: holds {done.shape}, expected "
                                     f"({len(shard_lines)}, {encoder.dim}); remove the directory")
                reused += 1
            else:
                vecs = np.concatenate([_embed_chunk(encoder, chunk, config)
                                       for chunk in _chunks(iter(shard_lines), config.buffer_lines)])
                if config.ids:
                    write_text(out / ids_name(k), "".join(f"{l.id}\n" for l in shard_lines))
                save_npy(path, vecs)
            shards.append({"file": name, "rows": len(shard_lines)})
            rows += len(shard_lines)
            progress.advance(len(shard_lines), total)
    if total is not None and rows != total:
        raise InputError(f"input changed while it was being read ({rows} lines, {total} counted)")
    write_json(out / INDEX, index_record([s["rows"] for s in shards], encoder.dim, config.dtype,
                                         encoder.fingerprint()))
    return EmbedResult(out, rows, encoder.dim, config.dtype, shards_reused=reused,
                       shards=[s["file"] for s in shards])


def load_embeddings(path: str | os.PathLike, mmap: bool = False) -> np.ndarray:
    """Read the output of `xlingua embed`: an .npy file, or a complete sharded directory."""
    path = Path(path)
    if path.is_dir():
        try:
            return Store(path).load(mmap)
        except StoreError as exc:
            raise InputError(str(exc)) from None
    return np.load(path, mmap_mode="r" if mmap else None)


class _Progress:
    """The progress bar (sentences/s) of an embedding job, or nothing."""

    def __init__(self, enabled: bool, label: str):
        self.enabled = enabled
        self.label = label
        self._progress = None
        self._task = None

    def __enter__(self):
        if self.enabled:
            self._progress, self._task = progress_bar(f"[bold]embed[/] {self.label}", None, rate="sent")
        return self

    def count(self, lines: Iterator[Line]) -> int:
        """Count the lines (validating them) under a spinner."""
        if not self._progress:
            return sum(1 for _ in lines)
        n = 0
        for n, _ in enumerate(lines, 1):
            if n % 100_000 == 0:
                self._progress.update(self._task, completed=n)
        self._progress.reset(self._task, total=n)
        return n

    def advance(self, k: int, total: int | None = None) -> None:
        if self._progress:
            if total is not None:
                self._progress.update(self._task, total=total)
            self._progress.update(self._task, advance=k)

    def __exit__(self, *exc):
        if self._progress:
            self._progress.stop()
        return False
