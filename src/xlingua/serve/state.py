"""What every route of one server shares: its settings, the batcher in front of the model, the
metrics, the input checks and the API key check. Routes reach it through `ServerState.of`."""
from __future__ import annotations

import asyncio
import hmac
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fastapi import Depends, Request
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool

from xlingua.encoders.base import Encoder
from xlingua.serve import tokens as toks
from xlingua.serve.batcher import Batcher, Overloaded
from xlingua.serve.errors import APIError, ClientGone
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


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="ignore")


@dataclass
class ServerState:
    encoder: Encoder
    config: ServeConfig
    metrics: Metrics = field(default_factory=Metrics)
    created: int = field(default_factory=lambda: int(time.time()))
    batcher: Batcher = field(init=False)
    _qe: Any = field(default=None, init=False)  # the QE model, or why it could not load

    def __post_init__(self):
        self.batcher = Batcher(self.encoder, max_queue=self.config.max_queue,
                               token_budget=self.config.token_budget, metrics=self.metrics)

    @staticmethod
    def of(request: Request) -> ServerState:
        return request.app.state.serve

    def texts(self, value: Any, name: str, limit: int | None = None) -> list[str]:
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
            self._check_text(t, name if single else f"{name}[{i}]")
        limit = limit or self.config.max_items
        if len(items) > limit:
            raise APIError(413, f"{name} has {len(items)} items, over the limit of {limit} per request",
                           "too_many_items", name)
        return items

    def _check_text(self, text: Any, where: str) -> None:
        if not isinstance(text, str):
            raise APIError(422, f"{where} must be a string", "invalid_type", where)
        if not text.strip():
            raise APIError(400, f"{where} is empty", "empty_input", where)
        if len(text) > self.config.max_chars:
            raise APIError(413, f"{where} has {len(text):,} characters, over the limit of "
                           f"{self.config.max_chars:,}", "item_too_long", where)

    async def embed(self, request: Request, items: list[str], lang: str | None = None):
        """The batcher's answer for `items` (in language `lang`, which a model routed by language
        reads); the queued work is dropped if the client hangs up."""
        if lang is not None:
            from xlingua.data.langs import normalize_lang

            try:
                normalize_lang(lang)
            except ValueError as exc:
                raise APIError(422, str(exc), "invalid_value", "lang") from None
        try:
            job = self.batcher.submit(items, lang)
        except Overloaded as exc:
            raise _overloaded(exc) from None
        done = asyncio.wrap_future(job.future)
        gone = asyncio.ensure_future(_disconnected(request))
        await asyncio.wait({done, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            self.batcher.cancel(job)
            done.cancel()
            raise ClientGone()
        gone.cancel()
        return done.result()

    def blocking_embed(self, items, lang=None):
        """For the thread pool (score, align, mine): waits on the batcher."""
        return self.batcher.embed(items, lang)

    async def in_pool(self, fn, *args):
        try:
            return await run_in_threadpool(fn, *args)
        except Overloaded as exc:
            raise _overloaded(exc) from None

    def need_tokenizer(self) -> None:
        if toks.backend(self.encoder) is None:
            raise APIError(400, f"model {self.config.model_name!r} has no tokenizer to show or truncate with",
                           "no_tokenizer")

    def qe_model(self):
        """The shipped QE model, loaded on first use, if it reads this server's model's vectors."""
        if self._qe is None:
            from xlingua.qe.load import load_qe

            try:
                self._qe = load_qe(self.config.qe_model, self.encoder)
            except (ValueError, FileNotFoundError) as e:
                self._qe = e
        if isinstance(self._qe, Exception):
            raise APIError(422, f"qe is not available for model {self.config.model_name!r}: {self._qe}",
                           "invalid_value", "qe")
        return self._qe


def check_key(request: Request) -> None:
    key = ServerState.of(request).config.api_key
    if key is None:
        return
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {key}".encode()):
        raise APIError(401, "invalid or missing API key (send Authorization: Bearer KEY)",
                       "invalid_api_key")


#: the dependencies of every inference route
AUTH = [Depends(check_key)]
#: a route's parameter default that gives it the server's state
STATE = Depends(ServerState.of)


def normalized(vecs: np.ndarray) -> np.ndarray:
    return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


def _overloaded(exc: Overloaded) -> APIError:
    return APIError(429, str(exc), "server_overloaded", headers={"Retry-After": str(exc.retry_after)})


async def _disconnected(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _ids(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(type(x) is int for x in value)
