"""`xlingua serve`: loads the model and runs the HTTP server of xlingua.serve."""
from __future__ import annotations

import typer

from xlingua.cli.options import MODEL_OPTION


def serve_command(
    model: str = MODEL_OPTION,
    host: str = typer.Option("127.0.0.1", help="Address to bind (127.0.0.1: this machine only; 0.0.0.0 opens it to the network)."),
    port: int = typer.Option(8080, help="Port."),
    api_key: str = typer.Option(None, "--api-key", envvar="XLINGUA_API_KEY", help="Require Authorization: Bearer KEY on inference routes (or set XLINGUA_API_KEY)."),
    served_model_name: str = typer.Option(None, help="Model id clients send and see (default: the spec, without directories)."),
    max_items: int = typer.Option(256, help="Texts per request (and sentences per document for /align)."),
    max_chars: int = typer.Option(20_000, help="Characters per text."),
    max_body: int = typer.Option(4_000_000, help="Bytes per request body."),
    max_queue: int = typer.Option(4096, help="Texts waiting for the model before requests get 429."),
    token_budget: int = typer.Option(16_384, help="Tokens per model call, across requests."),
    qe_model: str = typer.Option(None, "--qe-model", help="QE model for /score's qe: a shipped name or a directory (default: the shipped qe-cross, for --model bundled; qe-small is about 3x faster)."),
):
    """Serve the model over HTTP: OpenAI and TEI compatible embeddings, score, align, mine, a page."""
    import uvicorn

    from xlingua.encoders.loading import load_encoder
    from xlingua.serve import ServeConfig, create_app, served_name

    try:
        config = ServeConfig(served_model_name or served_name(model), api_key=api_key or None,
                             max_items=max_items, max_chars=max_chars, max_body=max_body,
                             max_queue=max_queue, token_budget=token_budget, qe_model=qe_model)
        encoder = load_encoder(model)
    except (ValueError, OSError) as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    typer.echo(f"serving {config.model_name} ({encoder.dim} dimensions) on http://{host}:{port}/", err=True)
    uvicorn.run(create_app(encoder, config), host=host, port=port, workers=1, log_level="warning")
