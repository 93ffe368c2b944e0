"""The contract every cached step of `prepare` and `mine` follows (as stopes' pipeline modules).

- A frozen config dataclass holds the step's own settings and its inputs. An input is the
  output of an upstream step (`upstream()`): the key holds the input's key, so a change
  upstream reaches every step below it. A `path_field()` (where a file is, not what it holds)
  or an `unkeyed()` setting (one that moves no output, e.g. a batch size) enters the key empty.
- `items()` lists the step's work items (its shards; a step without shards has one item,
  None), `item_done(item)` says whether an item's files exist, `run(item, progress)` does one
  item and writes its files atomically, and `summarize()` builds the step's `Output` from
  those files once every item is done.
- The runner (mining.runner) does the rest for every step alike: a step whose summary
  (`done.json`) exists is loaded, not run; otherwise the items left run (in this process, or
  as Ray tasks for a step that `spread`s), then the summary is written, last and atomically. A killed run leaves no
  summary, and its rerun does only the items without files.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import ClassVar, Sequence

from xlingua.io import stable_hash
from xlingua.mining.cache import load_json, save_json

_UPSTREAM, _KEYED = "upstream", "keyed"


def upstream(*, key: bool = True):
    """A field holding an upstream step's Output (or a tuple of them). key=False for an input
    another input's key already covers."""
    return dataclasses.field(metadata={_UPSTREAM: True, _KEYED: key})


def unkeyed(default=dataclasses.MISSING):
    """A setting that changes no output (so not the key), e.g. how many texts go to a batch."""
    return dataclasses.field(default=default, metadata={_KEYED: False})


def path_field(default=dataclasses.MISSING):
    """Where something is, not what it holds: outside the key, so moved files keep their cache."""
    return unkeyed(default)


@dataclasses.dataclass(frozen=True)
class Output:
    """A finished step as its successors see it: its key, its directory and its summary."""
    key: str
    dir: str

    def summary(self) -> dict:
        """What `done.json` holds (everything but key and dir)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.name not in ("key", "dir")}


def _plain(value):
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value


def _blank(value):
    return None if value is None else type(value)()


class Step:
    """One cached step of `prepare` or `mine`: subclasses set `name` and `output_type` and give
    `items`, `item_done`, `run` and `summarize` (the module docstring has the contract)."""

    name: ClassVar[str] = "step"
    #: bump when the step's code changes its output, so old caches are not reused
    version: ClassVar[int] = 1
    output_type: ClassVar[type] = Output
    #: the order of the key's fields when it differs from the config's (see old_key_fields)
    key_order: ClassVar[tuple] = ()
    #: the config's name in the key when its class was renamed after keys were written with
    #: the old name (so those work directories keep their cache)
    key_config_name: ClassVar[str] = ""
    #: whether the items may run as Ray tasks: only steps whose items read the work directory
    #: alone (an input file or a store may exist on this machine only)
    spread: ClassVar[bool] = False

    def __init__(self, config, workdir):
        self.config = config
        self.workdir = Path(workdir)

    # ---- the key and the directory

    def key_fields(self) -> dict:
        """The config as the key sees it: inputs by their keys, unkeyed fields empty."""
        out = {}
        for f in dataclasses.fields(self.config):
            value = getattr(self.config, f.name)
            if f.metadata.get(_UPSTREAM):
                if f.metadata[_KEYED]:
                    many = isinstance(value, tuple)
                    out[f"{f.name}_keys" if many else f"{f.name}_key"] = (
                        tuple(v.key for v in value) if many else value.key)
            else:
                out[f.name] = value if f.metadata.get(_KEYED, True) else _blank(value)
        out.update(self.old_key_fields())
        return {name: out[name] for name in self.key_order} if self.key_order else out

    def old_key_fields(self) -> dict:
        """What the keys of work directories written before this contract also held (blank
        paths, copies of the inputs' sizes): kept in the key so those directories resume."""
        return {}

    @property
    def key(self) -> str:
        """A hash of the step's name, version and key fields, written as Python writes the
        config (`ShardConfig(path='', ...)`): the form keys have had from the start."""
        fields = ", ".join(f"{name}={value!r}" for name, value in self.key_fields().items())
        versioned = {"version": self.version} if self.version > 1 else {}
        config_name = self.key_config_name or type(self.config).__name__
        return stable_hash({"step": self.name, "config": f"{config_name}({fields})", **versioned})

    @property
    def dir(self) -> Path:
        return self.workdir / self.name / self.key

    @property
    def done_file(self) -> Path:
        return self.dir / "done.json"

    def done(self) -> bool:
        return self.done_file.exists()

    # ---- the work

    def items(self) -> Sequence:
        """The step's work items (its shards); one item, None, for a step without shards."""
        return (None,)

    def item_done(self, item) -> bool:
        """Whether the item's files exist (a rerun skips it)."""
        return False

    def item_rows(self, item) -> int | None:
        """How many rows (sentences, vectors) the item holds, for the progress line's rate;
        None where items are not rows."""
        return None

    def run(self, item, progress: bool) -> None:
        """Do one item, writing its files atomically."""
        raise NotImplementedError

    def summarize(self) -> Output:
        """The step's Output, built from its items' files once every item is done."""
        raise NotImplementedError

    # ---- the summary

    def output(self, summary: dict) -> Output:
        """The Output of a summary read back (steps whose Output holds more override this)."""
        return self.output_type(self.key, str(self.dir), **summary)

    def load(self) -> Output:
        return self.output(load_json(self.done_file))

    def finish(self, output: Output) -> Output:
        save_json(self.dir / "config.json", dataclasses.asdict(self.config))
        save_json(self.done_file, output.summary())  # last: its presence means done
        return output
