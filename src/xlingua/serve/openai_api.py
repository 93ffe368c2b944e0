"""OpenAI's embeddings API: POST /v1/embeddings (and /embeddings, as TEI serves it too) and
GET /v1/models."""
from __future__ import annotations

import base64
from typing import Any, Literal

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from xlingua.serve.errors import APIError
from xlingua.serve.state import AUTH, STATE, RequestBody, ServerState, normalized

router = APIRouter()


class EmbeddingsRequest(RequestBody):
    input: Any
    model: str | None = None
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = Field(None, ge=1)
    user: str | None = None
    lang: str | None = None  # the texts' language (not OpenAI's): a model routed by language reads it


@router.post("/v1/embeddings", dependencies=AUTH)
@router.post("/embeddings", dependencies=AUTH)  # TEI serves OpenAI's route without /v1 too
async def embeddings(body: EmbeddingsRequest, request: Request,
                     state: ServerState = STATE):
    config, dim = state.config, state.encoder.dim
    if body.model is not None and body.model != config.model_name:
        raise APIError(404, f"model {body.model!r} is not served here; this server serves "
                       f"{config.model_name!r}", "model_not_found", "model")
    if body.dimensions is not None and body.dimensions > dim:
        raise APIError(422, f"dimensions must be at most {dim}", "invalid_value", "dimensions")
    items = state.texts(body.input, "input")
    result = await state.embed(request, items, body.lang)
    vecs = result.vectors
    if body.dimensions is not None:  # OpenAI's shortening: cut, then L2-normalize again
        vecs = normalized(vecs[:, : body.dimensions])
    data = [{"object": "embedding", "index": i,
             "embedding": _b64(v) if body.encoding_format == "base64" else v.tolist()}
            for i, v in enumerate(vecs)]
    # A JSONResponse as is: FastAPI's jsonable_encoder would walk every float first.
    return JSONResponse({"object": "list", "data": data, "model": config.model_name,
                         "usage": {"prompt_tokens": result.tokens, "total_tokens": result.tokens}})


@router.get("/v1/models", dependencies=AUTH)
async def models(state: ServerState = STATE):
    return {"object": "list", "data": [{"id": state.config.model_name, "object": "model",
                                        "created": state.created, "owned_by": "xlingua"}]}


def _b64(v: np.ndarray) -> str:
    return base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode("ascii")
