"""ASGI middleware in front of every route: the body size limit, client hang-ups and the
request metrics."""
from __future__ import annotations

import time

from xlingua.serve.errors import ClientGone, error_response
from xlingua.serve.metrics import Metrics
from xlingua.serve.state import ServeConfig


class Limits:
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
