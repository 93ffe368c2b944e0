"""The server's worker cuts model calls by the rule every encoder's `encode` uses
(encoders.batching), across requests, and hands each request its own rows."""
from __future__ import annotations

import threading
import time

import numpy as np

from xlingua.encoders.base import Encoder
from xlingua.encoders.batching import plan_batches
from xlingua.serve.batcher import Batcher


class Recorder(Encoder):
    """No tokenizer (4 characters a token); records each model call; a row is the text's length
    and first letter, so rows show whose they are. The gate holds the first call."""

    name, dim = "recorder", 2

    def __init__(self):
        self.calls: list[list[str]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.running = threading.Event()
        self.call_cost = 5

    def _encode_batch(self, texts, lang):
        self.running.set()
        self.gate.wait(10)
        self.calls.append(list(texts))
        return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)


def rows(texts):
    return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)


def test_one_request_is_cut_by_the_shared_rule():
    enc = Recorder()
    texts = ["a" * 36, "b" * 4, "c" * 156, "d" * 8, "e" * 36, "f" * 4]  # tokens 10 2 40 3 10 2
    batcher = Batcher(enc)
    try:
        result = batcher.submit(texts).future.result(10)
    finally:
        batcher.close()
    # sorted 2 2 3 | 10 10 | 40 with a call costing 5 tokens (worked out in tests/encoders/test_batching.py)
    assert [[t[0] for t in call] for call in enc.calls] == [["b", "f", "d"], ["a", "e"], ["c"]]
    np.testing.assert_array_equal(result.vectors, rows(texts))
    assert result.tokens == 10 + 2 + 40 + 3 + 10 + 2


def test_requests_taken_together_are_cut_as_one_list():
    enc = Recorder()
    batcher = Batcher(enc)
    try:
        enc.gate.clear()
        hold = batcher.submit(["hold"])
        assert enc.running.wait(10)
        first = batcher.submit(["a" * 36, "b" * 4, "c" * 156])
        second = batcher.submit(["d" * 8, "e" * 36, "f" * 4])
        while batcher.queued < 6:
            time.sleep(0.01)
        enc.gate.set()
        got = [job.future.result(10) for job in (hold, first, second)]
    finally:
        batcher.close()
    texts = ["a" * 36, "b" * 4, "c" * 156, "d" * 8, "e" * 36, "f" * 4]
    plan = plan_batches(enc.lengths(texts), call_cost=5)
    assert enc.calls[1:] == [[texts[i] for i in batch] for batch in plan.batches]
    assert len(enc.calls) == 4  # the two requests' texts mixed: not one call per request
    np.testing.assert_array_equal(got[1].vectors, rows(texts[:3]))
    np.testing.assert_array_equal(got[2].vectors, rows(texts[3:]))


def test_tokens_are_the_encoders_own_count(tiny_encoder):
    batcher = Batcher(tiny_encoder)
    try:
        result = batcher.submit(["the red cat", ""]).future.result(30)
    finally:
        batcher.close()
    ids = tiny_encoder.tok.content_ids(["the red cat", ""])
    assert result.tokens == sum(len(x) + tiny_encoder.tok.num_special for x in ids)
    np.testing.assert_allclose(result.vectors, tiny_encoder.encode(["the red cat", ""]), atol=1e-5)
