"""Options several commands take, declared once so that they read alike everywhere."""
from __future__ import annotations

import typer

from xlingua.encoders.loading import BUNDLED

# The specs come from the encoder registry (`xlingua models`), not from here: listing them imports
# every encoder module, torch among them, and typer builds every help text at each start.
MODEL_HELP = (f"Encoder spec: bundled (the default, = {BUNDLED}), a model directory or hub name, or "
              "any spec `xlingua models` lists.")
MODEL_OPTION = typer.Option("bundled", "--model", "-m", help=MODEL_HELP)
ERRORS_OPTION = typer.Option("strict", help="Invalid UTF-8: strict (error with file:line) | replace (U+FFFD).")
