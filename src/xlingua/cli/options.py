"""Options several commands take, declared once so that they read alike everywhere.

One spelling per meaning: `option(default, "--output", "--out", help=...)` declares the agreed
spelling, its short form and the spellings the command took before. An old spelling still
parses, so a recorded command keeps working, but `Command` leaves it out of --help and of
error messages, and the docs show only the agreed one (docs/guide/options.md)."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import typer
from typer.core import TyperCommand

from xlingua.encoders.loading import SMALL, current_version

#: the short form of an agreed spelling, on every command that takes it
SHORT = {"--model": "-m", "--output": "-o", "--lang": "-l"}
#: old spelling -> the agreed one it stands for, where a command declares it beside that one
OLD_SPELLINGS = {
    "--lang-a": "--src-lang",  # align
    "--lang-b": "--tgt-lang",
    "--out": "--output",  # the commands that write a directory
    "--output-dir": "--output",  # train
    "--min-score": "--threshold",  # score
    "--langs": "--lang",  # laser train, meaning train
    "--opt": "--set",  # eval
}


def option(default: Any, name: str, *old: str, **kwargs) -> Any:
    """typer.Option spelled `name` (an agreed spelling) with its short form; `old` are the
    spellings the command took before (each in OLD_SPELLINGS), which still parse."""
    wrong = [o for o in old if OLD_SPELLINGS.get(o) != name]
    if wrong:
        raise ValueError(f"{wrong[0]} is not an old spelling of {name} (OLD_SPELLINGS)")
    short = [SHORT[name]] if name in SHORT else []
    return typer.Option(default, name, *short, *old, **kwargs)


class Command(TyperCommand):
    """A command whose old spellings parse but are shown nowhere: they are taken off each
    option's declarations and put back only while the parser is built."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for param in self.params:
            # an old spelling is hidden only behind its agreed one, never left as the only name
            old = [o for o in param.opts if OLD_SPELLINGS.get(o) in param.opts]
            param.old_spellings = old
            param.opts = [o for o in param.opts if o not in old]

    def make_parser(self, ctx):
        with _with_old_spellings(self.get_params(ctx)):
            return super().make_parser(ctx)


@contextmanager
def _with_old_spellings(params):
    shown = [(p, p.opts) for p in params if getattr(p, "old_spellings", None)]
    for p, opts in shown:
        p.opts = opts + p.old_spellings
    try:
        yield
    finally:
        for p, opts in shown:
            p.opts = opts


# The specs come from the encoder registry (`xlingua models`), not from here: listing them imports
# every encoder module, torch among them, and typer builds every help text at each start.
MODEL_HELP = (f"Encoder spec: bundled (the default: the current {SMALL}, {SMALL}@{current_version()}), "
              "a model directory or hub name, or any spec `xlingua models` lists.")
MODEL_OPTION = option("bundled", "--model", help=MODEL_HELP)
ERRORS_OPTION = typer.Option("strict", help="Invalid UTF-8: strict (error with file:line) | replace (U+FFFD).")
SRC_LANG_HELP = "Language code of the source side (ISO 639)."
TGT_LANG_HELP = "Language code of the target side (ISO 639)."


def split_langs(values: list[str] | None) -> list[str]:
    """Languages given as a repeated --lang, each a code or a comma-separated list."""
    return [x.strip() for v in values or [] for x in v.split(",") if x.strip()]
