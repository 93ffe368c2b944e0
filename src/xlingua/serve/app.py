"""The HTTP API: OpenAI-compatible embeddings, TEI-compatible routes (`POST /` included, as
TEI's clients call it), xlingua's own score / align / mine (the commands' code), Prometheus
metrics and the page.

The model is loaded once and runs only in the batcher's worker thread; numpy work (scores,
alignment) runs in the thread pool, never on the event loop. Every error is JSON, in TEI's
schema on TEI's routes and in OpenAI's elsewhere (errors.py). Requests can name no file, path
or model other than the one served.
"""
from __future__ import annotations

import asyncio
import base64
import hmac
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import numpy as np
from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from xlingua.encoders.base import Encoder
from xlingua.serve import tokens as toks
from xlingua.serve.batcher import Batcher, Overloaded
from xlingua.serve.errors import APIError, ClientGone, error_response, install
from xlingua.serve.metrics import Metrics


@dataclass
class ServeConfig:
    model_name: str
    api_key: str | None = None
    max_items: int = 256  # texts per request (and sentences per document for /align)
    max_chars: int = 20_000  # characters per text
    max_body: int = 4_000_000  # bytes per request body
    max_queue: int = 4096  # texts waiting for the model before 429
    token_budget: int = 16_384  # tokens per model call, across requests
    qe_model: str | None = None  # QE model directory for /score's qe (default: the shipped one)


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class EmbeddingsRequest(_Body):
    input: Any
    model: str | None = None
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = Field(None, ge=1)
    user: str | None = None


class EmbedRequest(_Body):
    inputs: Any
    normalize: bool = True
    truncate: bool = False
    truncation_direction: Literal["right", "Right", "left", "Left"] = "right"
    dimensions: int | None = Field(None, ge=1)
    prompt_name: str | None = None


class SimilarityInputs(_Body):
    source_sentence: Any
    sentences: Any


class SimilarityRequest(_Body):
    inputs: SimilarityInputs


class TokenizeRequest(_Body):
    inputs: Any
    add_special_tokens: bool = True


class ScoreRequest(_Body):
    src: Any
    tgt: Any
    margin: bool = False
    k: int = Field(4, ge=1, le=64)
    src_lang: str | None = None
    tgt_lang: str | None = None
    qe: bool = False


class AlignRequest(_Body):
    a: Any
    b: Any
    split: bool = True
    lang_a: str | None = None
    lang_b: str | None = None


class MineRequest(_Body):
    src: Any
    tgt: Any
    k: int = Field(4, ge=1, le=64)
    margin: Literal["ratio", "distance", "absolute", "csls", "inbatch"] = "ratio"
    mode: Literal["forward", "backward", "intersect", "max", "union"] = "max"
    threshold: float | None = None


def served_name(spec: str) -> str:
    """The model id clients see: the spec, or a directory's last name (no paths shown)."""
    from pathlib import PurePath

    return ",".join(PurePath(p).name if ("/" in p or "\\" in p) else p for p in spec.split(","))


def create_app(encoder: Encoder, config: ServeConfig) -> FastAPI:
    metrics = Metrics()
    batcher = Batcher(encoder, max_queue=config.max_queue, token_budget=config.token_budget,
                      metrics=metrics)
    @asynccontextmanager
    async def lifespan(app):
        yield
        batcher.close()

    app = FastAPI(title="xlingua", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.batcher = batcher
    app.state.config = config
    install(app)
    app.add_middleware(_Limits, config=config, metrics=metrics)
    created = int(time.time())

    def check_key(request: Request) -> None:
        if config.api_key is None:
            return
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {config.api_key}".encode()):
            raise APIError(401, "invalid or missing API key (send Authorization: Bearer KEY)",
                           "invalid_api_key")

    auth = [Depends(check_key)]

    def texts(value: Any, name: str, limit: int | None = None) -> list[str]:
        """A string or list of strings, checked against the limits (the item index named)."""
        single = isinstance(value, str)
        items = [value] if single else value
        if not isinstance(items, list):
            raise APIError(422, f"{name} must be a string or a list of strings", "invalid_type", name)
        if not items or (single and not value):
            raise APIError(400, f"{name} is empty", "empty_input", name)
        # Token ids (one text as a list of ints, or a list of them), before the count: LangChain's
        # OpenAIEmbeddings sends tiktoken ids by default, so the answer names its switch.
        ids = [name] if _ids(items) else [f"{name}[{i}]" for i, t in enumerate(items) if _ids(t)][:1]
        if ids:
            hint = (" (LangChain's OpenAIEmbeddings sends them unless made with "
                    "check_embedding_ctx_length=False)") if name == "input" else ""
            raise APIError(422, f"{ids[0]} holds token ids; this server reads text only{hint}",
                           "invalid_type", ids[0])
        for i, t in enumerate(items):
            where = name if single else f"{name}[{i}]"
            if not isinstance(t, str):
                raise APIError(422, f"{where} must be a string", "invalid_type", where)
            if not t.strip():
                raise APIError(400, f"{where} is empty", "empty_input", where)
            if len(t) > config.max_chars:
                raise APIError(413, f"{where} has {len(t):,} characters, over the limit of "
                               f"{config.max_chars:,}", "item_too_long", where)
        limit = limit or config.max_items
        if len(items) > limit:
            raise APIError(413, f"{name} has {len(items)} items, over the limit of {limit} per request",
                           "too_many_items", name)
        return items

    async def embed(request: Request, items: list[str], lang: str | None = None):
        try:
            job = batcher.submit(items, lang)
        except Overloaded as exc:
            raise APIError(429, str(exc), "server_overloaded",
                           headers={"Retry-After": str(exc.retry_after)}) from None
        done = asyncio.wrap_future(job.future)
        gone = asyncio.ensure_future(_disconnected(request))
        await asyncio.wait({done, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            batcher.cancel(job)
            done.cancel()
            raise ClientGone()
        gone.cancel()
        return done.result()

    def blocking_embed(items, lang=None):
        """For the thread pool (score, align, mine): waits on the batcher."""
        return batcher.embed(items, lang)

    async def in_pool(fn, *args):
        try:
            return await run_in_threadpool(fn, *args)
        except Overloaded as exc:
            raise APIError(429, str(exc), "server_overloaded",
                           headers={"Retry-After": str(exc.retry_after)}) from None

    # ---- OpenAI ------------------------------------------------------------------------
    @app.post("/v1/embeddings", dependencies=auth)
    @app.post("/embeddings", dependencies=auth)  # TEI serves OpenAI's route without /v1 too
    async def embeddings(body: EmbeddingsRequest, request: Request):
        if body.model is not None and body.model != config.model_name:
            raise APIError(404, f"model {body.model!r} is not served here; this server serves "
                           f"{config.model_name!r}", "model_not_found", "model")
        if body.dimensions is not None and body.dimensions > encoder.dim:
            raise APIError(422, f"dimensions must be at most {encoder.dim}", "invalid_value", "dimensions")
        items = texts(body.input, "input")
        result = await embed(request, items)
        vecs = result.vectors
        if body.dimensions is not None:  # OpenAI's shortening: cut, then L2-normalize again
            vecs = _normalized(vecs[:, : body.dimensions])
        data = [{"object": "embedding", "index": i,
                 "embedding": _b64(v) if body.encoding_format == "base64" else v.tolist()}
                for i, v in enumerate(vecs)]
        # A JSONResponse as is: FastAPI's jsonable_encoder would walk every float first.
        return JSONResponse({"object": "list", "data": data, "model": config.model_name,
                             "usage": {"prompt_tokens": result.tokens, "total_tokens": result.tokens}})

    @app.get("/v1/models", dependencies=auth)
    async def models():
        return {"object": "list", "data": [{"id": config.model_name, "object": "model",
                                            "created": created, "owned_by": "xlingua"}]}

    # ---- TEI ---------------------------------------------------------------------------
    @app.post("/embed", dependencies=auth)
    async def tei_embed(body: EmbedRequest, request: Request):
        if body.prompt_name is not None:
            raise APIError(422, f"prompt_name {body.prompt_name!r}: model {config.model_name!r} "
                           "has no prompts", "invalid_value", "prompt_name")
        if body.dimensions is not None and body.dimensions > encoder.dim:
            raise APIError(422, f"dimensions must be at most {encoder.dim}", "invalid_value", "dimensions")
        items = texts(body.inputs, "inputs")
        if body.truncate:
            _need_tokenizer()
            if body.truncation_direction.lower() == "left":
                raise APIError(422, "truncation_direction left is not supported: texts are cut at "
                               "the end", "invalid_value", "truncation_direction")
            items = [toks.truncate(encoder, t) for t in items]
        vecs = (await embed(request, items)).vectors[:, : body.dimensions]
        return JSONResponse((_normalized(vecs) if body.normalize else vecs).tolist())

    async def similarity(request: Request, source: Any, sentences: Any) -> list[float]:
        source = texts(source, "inputs.source_sentence")
        if len(source) != 1:
            raise APIError(422, "inputs.source_sentence must be one string", "invalid_type",
                           "inputs.source_sentence")
        others = texts(sentences, "inputs.sentences", config.max_items - 1)
        vecs = (await embed(request, source + others)).vectors
        from xlingua.similarity import cosine_matrix

        return cosine_matrix(vecs[:1], vecs[1:])[0].tolist()

    @app.post("/similarity", dependencies=auth)
    async def tei_similarity(body: SimilarityRequest, request: Request):
        return await similarity(request, body.inputs.source_sentence, body.inputs.sentences)

    @app.post("/", dependencies=auth)
    @app.post("/invocations", dependencies=auth)  # SageMaker's name for the same route
    async def tei_root(body: EmbedRequest, request: Request):
        """TEI answers here with its model type's route, /embed for an embedding model; a body
        shaped like /similarity's is answered as /similarity (clients' sentence_similarity
        posts it here)."""
        if not isinstance(body.inputs, dict):
            return await tei_embed(body, request)
        if not {"source_sentence", "sentences"} <= body.inputs.keys():
            raise APIError(422, "inputs must be a string, a list of strings or "
                           "{source_sentence, sentences}", "invalid_type", "inputs")
        return await similarity(request, body.inputs["source_sentence"], body.inputs["sentences"])

    def _need_tokenizer():
        if toks.backend(encoder) is None:
            raise APIError(400, f"model {config.model_name!r} has no tokenizer to show or truncate with",
                           "no_tokenizer")

    @app.post("/tokenize", dependencies=auth)
    async def tei_tokenize(body: TokenizeRequest):
        _need_tokenizer()
        items = texts(body.inputs, "inputs")
        return await run_in_threadpool(lambda: [toks.tokenize(encoder, t, body.add_special_tokens)
                                                for t in items])

    @app.get("/info")
    async def info():
        return {"model_id": config.model_name, "model_type": "embedding", "model_dtype": "float32",
                "dimension": encoder.dim, "max_input_length": toks.max_tokens(encoder),
                "max_client_batch_size": config.max_items, "max_batch_tokens": config.token_budget,
                "limits": {"items_per_request": config.max_items, "chars_per_item": config.max_chars,
                           "body_bytes": config.max_body, "queue_texts": config.max_queue,
                           "sentences_per_document": config.max_items},
                "api_key_required": config.api_key is not None, "version": _version()}

    @app.get("/health")
    @app.get("/ping")  # SageMaker's health check
    async def health():
        return {"status": "ok"}

    @app.get("/metrics")
    async def prometheus():
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    # ---- xlingua -----------------------------------------------------------------------
    @app.post("/score", dependencies=auth)
    async def score(body: ScoreRequest):
        from xlingua.score import score_texts

        src, tgt = texts(body.src, "src"), texts(body.tgt, "tgt")
        if len(src) != len(tgt):
            raise APIError(422, f"src has {len(src)} items but tgt has {len(tgt)}", "invalid_value", "tgt")
        qe = None
        if body.qe:
            qe = qe_model()
            for i, (a, b) in enumerate(zip(src, tgt)):
                if not a.strip() or not b.strip():
                    raise APIError(400, f"{'src' if not a.strip() else 'tgt'}[{i}] is empty; qe needs a source "
                                   "and its translation", "empty_input", f"{'src' if not a.strip() else 'tgt'}[{i}]")
        out = await in_pool(score_texts, blocking_embed, src, tgt, body.margin, body.k,
                            body.src_lang, body.tgt_lang, qe)
        answer = {name: v.round(6).tolist() for name, v in out.items()}
        if qe is not None:
            from xlingua.qe.load import qe_route_text
            from xlingua.score import qe_pair

            answer["qe_route"] = qe_route_text(qe, qe_pair(body.src_lang, body.tgt_lang))
        return answer

    qe_loaded: list = []

    def qe_model():
        """The shipped QE model, loaded on first use, if it reads this server's model's vectors."""
        if not qe_loaded:
            from xlingua.qe.load import load_qe

            try:
                qe_loaded.append(load_qe(config.qe_model, encoder))
            except (ValueError, FileNotFoundError) as e:
                qe_loaded.append(e)
        if isinstance(qe_loaded[0], Exception):
            raise APIError(422, f"qe is not available for model {config.model_name!r}: {qe_loaded[0]}",
                           "invalid_value", "qe")
        return qe_loaded[0]

    @app.post("/align", dependencies=auth)
    async def align(body: AlignRequest):
        from xlingua.align import align_sentences, document_sentences

        docs = []
        for name, value, lang in (("a", body.a, body.lang_a), ("b", body.b, body.lang_b)):
            paragraphs = texts(value, name)
            sents = document_sentences(paragraphs, body.split, lang)
            if len(sents) > config.max_items:
                raise APIError(413, f"{name} has {len(sents)} sentences, over the limit of "
                               f"{config.max_items} per document", "too_many_sentences", name)
            docs.append(sents)
        result = await in_pool(align_sentences, blocking_embed, docs[0], docs[1], body.lang_a, body.lang_b)
        return {"a": result.a, "b": result.b,
                "script_a": _script(" ".join(result.a)), "script_b": _script(" ".join(result.b)),
                "alignment": [{"a": [r[0], r[1]], "b": [r[2], r[3]],
                               "score": None if r[4] is None else round(r[4], 6),
                               "a_text": r[5], "b_text": r[6]} for r in result.rows()],
                "similarity": np.round(result.similarity, 4).tolist(), "tsv": result.tsv()}

    @app.post("/mine", dependencies=auth)
    async def mine(body: MineRequest):
        src, tgt = texts(body.src, "src"), texts(body.tgt, "tgt")

        def run():
            from xlingua.mining.memory import mine_rows
            from xlingua.similarity.select import apply_threshold

            found = mine_rows(blocking_embed(src), blocking_embed(tgt), k=body.k, margin=body.margin,
                              mode=body.mode)
            return apply_threshold(*found, body.threshold)

        s, a, b = await in_pool(run)
        return {"pairs": [{"src": int(i), "tgt": int(j), "score": round(float(x), 6),
                           "src_text": src[i], "tgt_text": tgt[j]} for x, i, j in zip(s, a, b)]}

    # ---- the page ----------------------------------------------------------------------
    static = resources.files("xlingua.serve") / "static"

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(str(static / "index.html"), media_type="text/html")

    @app.get("/static/{name}", include_in_schema=False)
    async def asset(name: str):
        allowed = {"app.js": "text/javascript", "style.css": "text/css"}
        if name not in allowed:  # a fixed list: no path from the request reaches the disk
            raise APIError(404, "not found", "not_found")
        return FileResponse(str(static / name), media_type=allowed[name])

    return app


async def _disconnected(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _ids(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(type(x) is int for x in value)


def _normalized(vecs: np.ndarray) -> np.ndarray:
    return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


def _b64(v: np.ndarray) -> str:
    return base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode("ascii")


def _script(text: str) -> dict | None:
    """The main writing system of a text and its share of the letters."""
    from xlingua.data.scripts import main_script

    found = main_script(text)
    return None if found is None else {"script": found[0], "share": round(found[1], 3)}


def _version() -> str:
    from xlingua import __version__

    return __version__


class _Limits:
    """ASGI middleware: body size limit (413 before the app sees the body), client hang-ups
    (499 in the metrics), and request counts / latency by route."""

    ROUTES = {"/v1/embeddings", "/embeddings", "/v1/models", "/embed", "/similarity", "/tokenize",
              "/info", "/health", "/ping", "/metrics", "/score", "/align", "/mine", "/", "/invocations"}

    def __init__(self, app, config: ServeConfig, metrics: Metrics):
        self.app, self.config, self.metrics = app, config, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        route = scope["path"] if scope["path"] in self.ROUTES else "other"
        start = time.perf_counter()
        status = {"code": 500}

        async def record(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            body = await self._read_body(scope, receive)
            if body is None:
                limit = self.config.max_body
                await error_response(scope["path"], 413, f"request body over the limit of {limit:,} bytes",
                                     "body_too_large")(scope, receive, record)
                return
            await self.app(scope, _replay(body, receive), record)
        except ClientGone:  # hung up while sending the body
            status["code"] = 499
        finally:
            self.metrics.requests.labels(route, str(status["code"])).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - start)

    async def _read_body(self, scope, receive) -> bytes | None:
        """The whole body, or None when it is over the limit (stops reading at the limit)."""
        limit = self.config.max_body
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone()
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _replay(body: bytes, receive):
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
