"""The routes of text-embeddings-inference (TEI): /embed, /similarity, `POST /` and
/invocations (its embedding route under its own and SageMaker's names), /tokenize, /info,
/health and /ping, and the Prometheus /metrics."""
from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from xlingua.serve import tokens as toks
from xlingua.serve.errors import APIError
from xlingua.serve.state import AUTH, STATE, RequestBody, ServerState, normalized

router = APIRouter()


class EmbedRequest(RequestBody):
    inputs: Any
    normalize: bool = True
    truncate: bool = False
    truncation_direction: Literal["right", "Right", "left", "Left"] = "right"
    dimensions: int | None = Field(None, ge=1)
    prompt_name: str | None = None
    lang: str | None = None  # the texts' language (not TEI's): a model routed by language reads it


class SimilarityInputs(RequestBody):
    source_sentence: Any
    sentences: Any


class SimilarityRequest(RequestBody):
    inputs: SimilarityInputs


class TokenizeRequest(RequestBody):
    inputs: Any
    add_special_tokens: bool = True


@router.post("/embed", dependencies=AUTH)
async def tei_embed(body: EmbedRequest, request: Request, state: ServerState = STATE):
    encoder, config = state.encoder, state.config
    if body.prompt_name is not None:
        raise APIError(422, f"prompt_name {body.prompt_name!r}: model {config.model_name!r} "
                       "has no prompts", "invalid_value", "prompt_name")
    if body.dimensions is not None and body.dimensions > encoder.dim:
        raise APIError(422, f"dimensions must be at most {encoder.dim}", "invalid_value", "dimensions")
    items = state.texts(body.inputs, "inputs")
    if body.truncate:
        state.need_tokenizer()
        if body.truncation_direction.lower() == "left":
            raise APIError(422, "truncation_direction left is not supported: texts are cut at "
                           "the end", "invalid_value", "truncation_direction")
        items = [toks.truncate(encoder, t) for t in items]
    vecs = (await state.embed(request, items, body.lang)).vectors[:, : body.dimensions]
    return JSONResponse((normalized(vecs) if body.normalize else vecs).tolist())


async def similarity(state: ServerState, request: Request, source: Any, sentences: Any) -> list[float]:
    from xlingua.similarity import cosine_matrix

    source = state.texts(source, "inputs.source_sentence")
    if len(source) != 1:
        raise APIError(422, "inputs.source_sentence must be one string", "invalid_type",
                       "inputs.source_sentence")
    others = state.texts(sentences, "inputs.sentences", state.config.max_items - 1)
    vecs = (await state.embed(request, source + others)).vectors
    return cosine_matrix(vecs[:1], vecs[1:])[0].tolist()


@router.post("/similarity", dependencies=AUTH)
async def tei_similarity(body: SimilarityRequest, request: Request, state: ServerState = STATE):
    return await similarity(state, request, body.inputs.source_sentence, body.inputs.sentences)


@router.post("/", dependencies=AUTH)
@router.post("/invocations", dependencies=AUTH)  # SageMaker's name for the same route
async def tei_root(body: EmbedRequest, request: Request, state: ServerState = STATE):
    """TEI answers here with its model type's route, /embed for an embedding model; a body
    shaped like /similarity's is answered as /similarity (clients' sentence_similarity
    posts it here)."""
    if not isinstance(body.inputs, dict):
        return await tei_embed(body, request, state)
    if not {"source_sentence", "sentences"} <= body.inputs.keys():
        raise APIError(422, "inputs must be a string, a list of strings or "
                       "{source_sentence, sentences}", "invalid_type", "inputs")
    return await similarity(state, request, body.inputs["source_sentence"], body.inputs["sentences"])


@router.post("/tokenize", dependencies=AUTH)
async def tei_tokenize(body: TokenizeRequest, state: ServerState = STATE):
    state.need_tokenizer()
    items = state.texts(body.inputs, "inputs")
    return await run_in_threadpool(lambda: [toks.tokenize(state.encoder, t, body.add_special_tokens)
                                            for t in items])


@router.get("/info")
async def info(state: ServerState = STATE):
    from xlingua import __version__

    config = state.config
    return {"model_id": config.model_name, "model_type": "embedding", "model_dtype": "float32",
            "dimension": state.encoder.dim, "max_input_length": toks.max_tokens(state.encoder),
            "max_client_batch_size": config.max_items, "max_batch_tokens": config.token_budget,
            "limits": {"items_per_request": config.max_items, "chars_per_item": config.max_chars,
                       "body_bytes": config.max_body, "queue_texts": config.max_queue,
                       "sentences_per_document": config.max_items},
            "api_key_required": config.api_key is not None, "version": __version__}


@router.get("/health")
@router.get("/ping")  # SageMaker's health check
async def health():
    return {"status": "ok"}


@router.get("/metrics")
async def prometheus(state: ServerState = STATE):
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
