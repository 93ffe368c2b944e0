"""The two output forms of `xlingua embed` (xlingua.embed) as steps of the mining step contract
(mining.step), run by its runner: skipped items, stale partials and the summary written last
are the runner's, as for `prepare` and `mine`.

- StoreStep (`OUT/`, --shard-size N): item k embeds input lines kN+1 .. (k+1)N into
  `shard-0000k.npy`; an item is done when its file exists; the summary is the store's
  index.json. The directory is the user's, not a key's: job.json (the inputs' paths, sizes and
  times, the model and the settings that move rows) stands where a step's key would, so a rerun
  of another job there is refused instead of mixing rows.
- NpyStep (`OUT.npy`): one item, the whole array; OUT.npy itself is the output.

Items read the input files, which may exist on this machine only, so they run here, in order,
sharing one reader: each line is read twice in all (the count, then the embedding). A stream
(a pipe, `-`) is read from its checked copy in the output's directory (data.spool).
"""
from __future__ import annotations

import contextlib
import json
import os
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from xlingua.data.spool import Spool
from xlingua.data.text import ERRORS_HINT, InputError, Line, read_lines
from xlingua.embed.config import EmbedFilesConfig, EmbedResult
from xlingua.encoders.base import Encoder
from xlingua.encoders.store import FORMAT, INDEX, ids_name, index_record, shard_name
from xlingua.io import atomic_open, atomic_path, open_memmap, save_npy, write_json, write_text
from xlingua.mining.step import Step

JOB = "job.json"
CHANGED = "input changed while it was being read"


def chunks(lines: Iterable[Line], size: int) -> Iterator[list[Line]]:
    lines = iter(lines)
    while chunk := list(islice(lines, size)):
        yield chunk


class _FilesStep(Step):
    """What both forms share: the encoder, the progress bar and the reading of the inputs."""

    name = "embed"

    def __init__(self, config: EmbedFilesConfig, encoder: Encoder, progress):
        super().__init__(config, Path(config.output).parent)
        self.encoder = encoder
        self.progress = progress  # xlingua.embed's bar: count(lines), advance(k)
        self.inputs = list(config.inputs)  # a stream becomes its copy on disk (claim)
        self.copies = {}  # position -> data.spool.Copy

    def claim(self, stack: contextlib.ExitStack) -> None:
        """Make the output's directory (and check what is already there), then copy the streams
        among the inputs into it; the copies go when `stack` closes."""
        self.dir.mkdir(parents=True, exist_ok=True)
        c = self.config
        spool = stack.enter_context(Spool(c.inputs, self.dir, errors=c.errors, max_chars=c.max_chars,
                                          ids=c.ids, hint=ERRORS_HINT))
        self.inputs, self.copies = spool.paths, spool.copies

    def lines(self) -> Iterator[Line]:
        c = self.config
        return read_lines(self.inputs, errors=c.errors, max_chars=c.max_chars, ids=c.ids, hint=ERRORS_HINT)

    def embed(self, lines: list[Line]) -> np.ndarray:
        """The rows of one buffer of lines, in the config's dtype."""
        c, enc = self.config, self.encoder
        options = {} if c.batch_size is None else {"batch_size": c.batch_size}
        vecs = enc.encode([line.text for line in lines], lang=c.lang, **options)
        if vecs.shape != (len(lines), enc.dim):
            raise RuntimeError(f"encoder {enc.name} returned {vecs.shape} for {len(lines)} lines")
        return vecs.astype(c.dtype, copy=False)


class NpyStep(_FilesStep):
    """OUT.npy: one item writing every row through a memory map under a temporary name."""

    @property
    def out(self) -> Path:
        return Path(self.config.output)

    @property
    def dir(self) -> Path:
        return self.out.parent

    def done(self) -> bool:
        return False  # nothing records what an existing OUT.npy holds: it is written anew

    def run(self, item, progress: bool) -> None:
        c = self.config
        n = self.progress.count(self.lines())
        with contextlib.ExitStack() as stack:
            tmp = stack.enter_context(atomic_path(self.out))
            ids_path = self.out.with_name(f"{self.out.stem}.ids.txt")
            ids_file = stack.enter_context(atomic_open(ids_path)) if c.ids else None
            arr = open_memmap(tmp, c.dtype, (n, self.encoder.dim))
            row = 0
            for chunk in chunks(self.lines(), c.buffer_lines):
                if row + len(chunk) > n:
                    raise InputError(f"{CHANGED} (more lines than counted)")
                arr[row : row + len(chunk)] = self.embed(chunk)
                if ids_file:
                    ids_file.writelines(f"{line.id}\n" for line in chunk)
                row += len(chunk)
                self.progress.advance(len(chunk))
            if row != n:
                raise InputError(f"{CHANGED} ({row} lines, {n} counted)")
            arr.flush()
            del arr  # closed before the rename

    def summarize(self) -> EmbedResult:
        rows, dim = np.load(self.out, mmap_mode="r").shape
        return EmbedResult(self.out, rows, dim, self.config.dtype, shards=[self.out.name])

    def finish(self, output: EmbedResult) -> EmbedResult:
        return output  # OUT.npy, renamed into place by the item, is the whole output


class StoreStep(_FilesStep):
    """OUT/ with --shard-size N: one item per shard of the input (encoders.store)."""

    def __init__(self, config: EmbedFilesConfig, encoder: Encoder, progress):
        super().__init__(config, encoder, progress)
        self.sizes: list[int] = []  # rows per shard, from the count (items)
        self.reused = 0
        self._reader, self._next = None, 0

    @property
    def dir(self) -> Path:
        return Path(self.config.output)

    @property
    def done_file(self) -> Path:
        return self.dir / INDEX

    def claim(self, stack: contextlib.ExitStack) -> None:
        """job.json: written by the first run, compared by every rerun."""
        out = self.dir
        if out.exists() and not out.is_dir():
            raise InputError(f"{out}: exists and is not a directory (a sharded output is a directory)")
        super().claim(stack)
        job, path = self.job(), out / JOB
        if not path.exists():
            write_json(path, job)
        elif json.loads(path.read_text(encoding="utf-8")) != job:
            raise InputError(f"{out} holds a different job (other inputs, model or settings); "
                             "remove it or choose another output")

    def job(self) -> dict:
        """A file by its path, size and time; a stream by the size and hash of its bytes (so
        the same bytes piped again resume the job)."""
        c, inputs = self.config, []
        for i, path in enumerate(c.inputs):
            if i in self.copies:
                inputs.append(self.copies[i].record())
            else:
                st = os.stat(path)
                inputs.append({"path": os.path.abspath(path), "size": st.st_size, "mtime": int(st.st_mtime)})
        return {"format": FORMAT, "model": self.encoder.fingerprint(), "dim": self.encoder.dim,
                "dtype": c.dtype, "shard_size": c.shard_size, "lang": c.lang, "errors": c.errors,
                "max_chars": c.max_chars, "ids": c.ids, "inputs": inputs}

    def load(self) -> EmbedResult:
        index = json.loads(self.done_file.read_text(encoding="utf-8"))
        return EmbedResult(self.dir, index["rows"], index["dim"], index["dtype"],
                           shards_reused=len(index["shards"]), shards=[s["file"] for s in index["shards"]])

    def items(self) -> range:
        n = self.progress.count(self.lines())
        size = self.config.shard_size
        self.sizes = [min(size, n - start) for start in range(0, n, size)]
        done = [k for k in range(len(self.sizes)) if self.item_done(k)]
        for k in done:  # checked before any work: a shard that does not fit is not reused
            path, want = self.dir / shard_name(k), (self.sizes[k], self.encoder.dim)
            shape = np.load(path, mmap_mode="r").shape
            if shape != want:
                raise InputError(f"{path}: holds {shape}, expected {want}; remove the directory")
        self.reused = len(done)
        self.progress.advance(sum(self.sizes[k] for k in done))
        return range(len(self.sizes))

    def item_done(self, k: int) -> bool:
        return (self.dir / shard_name(k)).exists()

    def run(self, k: int, progress: bool) -> None:
        lines = self._shard(k)
        vecs = np.concatenate([self.embed(chunk) for chunk in chunks(lines, self.config.buffer_lines)])
        if self.config.ids:  # before the shard: a shard file means its ids are there too
            write_text(self.dir / ids_name(k), "".join(f"{line.id}\n" for line in lines))
        save_npy(self.dir / shard_name(k), vecs)
        self.progress.advance(len(lines))

    def _shard(self, k: int) -> list[Line]:
        """Shard k's lines. Items come in order, so the shared reader only moves on (skipping
        finished shards); an earlier shard starts it over."""
        if self._reader is None or self._next > k:
            self._reader, self._next = chunks(self.lines(), self.config.shard_size), 0
        shard: list[Line] = []
        while self._next <= k:
            shard = next(self._reader, [])
            self._next += 1
        if len(shard) != self.sizes[k]:
            raise InputError(f"{CHANGED} ({sum(self.sizes[:k]) + len(shard)} lines, {sum(self.sizes)} counted)")
        if k == len(self.sizes) - 1 and next(self._reader, None):
            raise InputError(f"{CHANGED} (more lines than counted)")
        return shard

    def summarize(self) -> EmbedResult:
        return EmbedResult(self.dir, sum(self.sizes), self.encoder.dim, self.config.dtype,
                           shards_reused=self.reused, shards=[shard_name(k) for k in range(len(self.sizes))])

    def finish(self, output: EmbedResult) -> EmbedResult:
        write_json(self.done_file, index_record(self.sizes, output.dim, output.dtype, self.encoder.fingerprint()))
        return output
