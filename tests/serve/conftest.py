"""Fixtures for the server: a tiny BERT encoder, a gated toy encoder (the test decides when the
model runs), an in-process client and a live server on 127.0.0.1."""
from __future__ import annotations

import asyncio
import socket
import threading
import time

import httpx
import numpy as np
import pytest

from xlingua.encoders.base import Encoder
from xlingua.serve import ServeConfig, create_app


class GateEncoder(Encoder):
    """Rows from a hash of the text; `encode` waits until the gate is open and records every
    call, so a test can hold the model while requests queue up."""

    name = "gate"
    dim = 4

    def __init__(self, fail: bool = False):
        self.gate = threading.Event()
        self.gate.set()
        self.running = threading.Event()
        self.calls: list[list[str]] = []
        self.fail = fail

    def encode(self, texts, lang=None, batch_size=None, show_progress=False):
        self.running.set()
        self.gate.wait(10)
        self.calls.append(list(texts))
        if self.fail:
            raise RuntimeError("secret internal detail /srv/model.bin")
        return np.stack([self.vector(t) for t in texts])

    def _encode_batch(self, texts, lang):
        return self.encode(texts)

    @staticmethod
    def vector(text: str) -> np.ndarray:
        v = np.random.default_rng(sum(map(ord, text)) + len(text)).standard_normal(4)
        return (v / np.linalg.norm(v)).astype(np.float32)


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory):
    from tests.training.conftest import make_tiny_model_dir
    from xlingua.encoders.loading import load_encoder

    return load_encoder(str(make_tiny_model_dir(tmp_path_factory.mktemp("serve_tiny"))))


def request(app, method: str, path: str, **kw) -> httpx.Response:
    """One request through the ASGI app, in process."""
    async def go():
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.request(method, path, **kw)

    return asyncio.run(go())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """uvicorn in a thread, bound to 127.0.0.1."""

    def __init__(self, encoder, config: ServeConfig):
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(create_app(encoder, config), host="127.0.0.1",
                                                    port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.time() + 30
        while not self.server.started:
            if time.time() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)
