"""`xlingua models`: the encoder specs, read from the encoder registry."""
from __future__ import annotations

import typer


def models_command():
    """The encoder specs --model takes, with what each is."""
    from xlingua.encoders.registry import readable_specs

    found = readable_specs()
    width = max(len(s.pattern) for s in found)
    for spec in found:
        missing = "" if spec.installed() else " [not in this installation]"
        typer.echo(f"{spec.pattern:<{width}}  {spec.text()}{missing}")
