"""The settings of one `xlingua embed` job and what it reports (xlingua.embed runs it)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from xlingua.data.langs import normalize_lang
from xlingua.data.text import DEFAULT_MAX_CHARS

DTYPES = ("float32", "float16")


@dataclasses.dataclass(frozen=True)
class EmbedFilesConfig:
    inputs: tuple[str, ...]
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
        object.__setattr__(self, "inputs", tuple(self.inputs))
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {self.dtype!r}")
        if self.shard_size is not None and self.shard_size < 1:
            raise ValueError("shard_size must be at least 1")
        if (self.batch_size is not None and self.batch_size < 1) or self.buffer_lines < 1:
            raise ValueError("batch_size and buffer_lines must be at least 1")
        if self.lang is not None:
            normalize_lang(self.lang)  # "klingon" or "english" is an error, not a silent no-op


@dataclasses.dataclass
class EmbedResult:
    output: Path
    rows: int
    dim: int
    dtype: str
    shards_reused: int = 0
    shards: list[str] = dataclasses.field(default_factory=list)
