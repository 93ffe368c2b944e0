"""`xlingua embed`: text files in, one embedding row per input line out.

Two output forms, each run as a step of the mining step contract by its runner (embed.steps):
- `OUT.npy`: one array (n, dim), one item. Lines are counted (and validated) first, then rows
  are written into a memory-mapped temp file `.OUT.npy.partial-PID` (its disk space reserved up
  front, so a full disk is an error, not a SIGBUS) and renamed to OUT.npy only when every row
  is there: an interrupted run never leaves a complete-looking OUT.npy, and the next run
  removes the partials of dead processes.
- `OUT/` with `shard_size=N`: a store (encoders.store). Its items are the input's shards of N
  lines, `shard-00000.npy` each written atomically, and `index.json` (the summary) written last:
  its presence means the job is complete. Rerunning the same command keeps finished shards and
  embeds only the rest; `job.json` records the job so that a rerun with other inputs, model or
  settings is refused instead of mixing rows.

Inputs may be pipes (`<(zcat x.gz)`) or `-` for stdin: each is copied once, checked, beside the
output (data.spool) and read from there; job.json records its size and hash, so a sharded job
fed the same bytes again resumes.

Memory stays bounded: lines are read as a stream and embedded `buffer_lines` at a time (the
encoder sorts each buffer by length so batches carry little padding). `load_embeddings` reads
either form.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from xlingua.data.text import InputError, Line, check_readable
from xlingua.embed.config import DTYPES, EmbedFilesConfig, EmbedResult  # noqa: F401  (named here too)
from xlingua.encoders.base import Encoder
from xlingua.encoders.store import load_embeddings  # noqa: F401  (the one reader, also from here)
from xlingua.io import check_writable
from xlingua.progress import progress_bar


def embed_files(encoder: Encoder, config: EmbedFilesConfig) -> EmbedResult:
    """Run one embedding job (see the module docstring for the output forms)."""
    from xlingua.embed.steps import NpyStep, StoreStep
    from xlingua.mining.runner import Runner

    check_readable(config.inputs)
    check_output(config)
    with contextlib.ExitStack() as stack:
        progress = stack.enter_context(_Progress(config.show_progress, encoder.name))
        step = (StoreStep if config.shard_size else NpyStep)(config, encoder, progress)
        step.claim(stack)
        # the step's one bar spans all items; the runner's per-item lines would land on stdout
        return Runner(show_progress=False).run(step, "embed")


def check_output(config: EmbedFilesConfig) -> None:
    """Refuse an output that cannot be written before any model runs."""
    if not config.shard_size and not config.output.endswith(".npy"):
        raise InputError(f"{config.output}: output must end in .npy, or pass --shard-size N "
                         "to write a sharded directory")
    check_writable(config.output, is_dir=bool(config.shard_size))


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
        """Count the lines (validating them) under a spinner; the count becomes the total."""
        if not self._progress:
            return sum(1 for _ in lines)
        n = 0
        for n, _ in enumerate(lines, 1):
            if n % 100_000 == 0:
                self._progress.update(self._task, completed=n)
        self._progress.reset(self._task, total=n)
        return n

    def advance(self, k: int) -> None:
        if self._progress:
            self._progress.update(self._task, advance=k)

    def __exit__(self, *exc):
        if self._progress:
            self._progress.stop()
        return False
