"""The HTTP API: OpenAI-compatible embeddings (openai_api.py), TEI-compatible routes (`POST /`
included, as TEI's clients call it; tei_api.py), xlingua's own score / align / mine (the
commands' code; jobs.py), Prometheus metrics and the page (page.py), over one ServerState.

The model is loaded once and runs only in the batcher's worker thread; numpy work (scores,
alignment) runs in the thread pool, never on the event loop. Every error is JSON, in TEI's
schema on TEI's routes and in OpenAI's elsewhere (errors.py). Requests can name no file, path
or model other than the one served.
"""
from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import PurePath

from fastapi import FastAPI

from xlingua.encoders.base import Encoder
from xlingua.serve import jobs, openai_api, page, tei_api
from xlingua.serve.errors import install
from xlingua.serve.limits import Limits
from xlingua.serve.state import ServeConfig, ServerState

__all__ = ["ServeConfig", "create_app", "served_name"]


def create_app(encoder: Encoder, config: ServeConfig) -> FastAPI:
    state = ServerState(encoder, config)
    app = FastAPI(title="xlingua", docs_url=None, redoc_url=None, openapi_url=None, lifespan=_lifespan)
    app.state.serve = state
    app.state.batcher, app.state.config = state.batcher, config
    install(app)
    app.add_middleware(Limits, config=config, metrics=state.metrics)
    for family in (openai_api, tei_api, jobs, page):  # in this order: POST / is TEI's, GET / the page
        app.include_router(family.router)
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI):
    yield
    app.state.serve.batcher.close()


def served_name(spec: str) -> str:
    """The model id clients see: the spec, or a directory's last name (no paths shown)."""
    return ",".join(PurePath(p).name if ("/" in p or "\\" in p) else p for p in spec.split(","))
