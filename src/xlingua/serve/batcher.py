"""Dynamic batching for the server: requests from many clients share model calls.

Requests go onto a bounded queue (counted in texts); one worker thread takes the oldest
request and then as many of the next ones as fit a token budget, embeds all their texts with
one `encode` call, and hands each request its rows. `encode` cuts model calls by the rule every
encoder shares (encoders.batching: sorted by tokens, cut where padding would cost more than
another call), so a few requests of mixed sizes are not padded to the longest text.
The event loop never runs the model. A request whose client has gone is dropped from the
queue (or its rows discarded if it is already running).
"""
from __future__ import annotations

import logging
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from xlingua.encoders.base import Encoder

log = logging.getLogger("xlingua.serve")


class Overloaded(Exception):
    """The queue is full: the client should retry after `retry_after` seconds."""

    def __init__(self, retry_after: int):
        super().__init__(f"server overloaded, retry after {retry_after} s")
        self.retry_after = retry_after


@dataclass(eq=False)
class Job:
    texts: list[str]
    lang: str | None
    future: Future = field(default_factory=Future)
    tokens: int | None = None
    lengths: list[int] | None = None  # tokens per text, special tokens included
    cancelled: bool = False


@dataclass
class Result:
    vectors: np.ndarray
    tokens: int


class Batcher:
    def __init__(self, encoder: Encoder, max_queue: int = 4096, token_budget: int = 16384, metrics=None):
        self.encoder = encoder
        self.max_queue = max_queue
        self.token_budget = token_budget
        self.metrics = metrics
        self._jobs: deque[Job] = deque()
        self._queued = 0  # texts waiting
        self._cond = threading.Condition()
        self._closed = False
        self._items_per_s = None  # measured throughput, for Retry-After
        self._thread = threading.Thread(target=self._run, name="xlingua-batcher", daemon=True)
        self._thread.start()

    # ---- called from request handlers ------------------------------------------------
    def submit(self, texts: Sequence[str], lang: str | None = None) -> Job:
        job = Job(list(texts), lang)
        with self._cond:
            if self._closed:
                raise RuntimeError("the batcher is closed")
            if self._queued and self._queued + len(job.texts) > self.max_queue:
                raise Overloaded(self._retry_after())
            self._jobs.append(job)
            self._queued += len(job.texts)
            self._gauge()
            self._cond.notify()
        return job

    def embed(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """Blocking: for code running in a worker thread (score, align, mine)."""
        return self.submit(texts, lang).future.result().vectors

    def cancel(self, job: Job) -> None:
        """The client went away: drop the job if it still waits."""
        with self._cond:
            job.cancelled = True
            if job in self._jobs:
                self._jobs.remove(job)
                self._queued -= len(job.texts)
                self._gauge()
                if self.metrics:
                    self.metrics.dropped.inc()
        job.future.cancel()

    @property
    def queued(self) -> int:
        return self._queued

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=10)

    # ---- the worker -------------------------------------------------------------------
    def _tokens(self, job: Job) -> int:
        if job.tokens is None:
            job.lengths = self.encoder.lengths(job.texts)
            job.tokens = sum(job.lengths)
        return job.tokens

    def _take(self) -> list[Job] | None:
        with self._cond:
            while not self._jobs and not self._closed:
                self._cond.wait()
            if self._closed:
                return None
            first = self._jobs[0]
            lang = first.lang
        # Tokenize outside the lock (it takes time); then take what fits the budget.
        budget = self._tokens(first)
        with self._cond:
            popped = [self._jobs.popleft()] if self._jobs and self._jobs[0] is first else []
            while popped and self._jobs and self._jobs[0].lang == lang:
                if budget + self._tokens(self._jobs[0]) > self.token_budget:
                    break
                budget += self._jobs[0].tokens
                popped.append(self._jobs.popleft())
            self._queued -= sum(len(j.texts) for j in popped)
            self._gauge()
        taken = [j for j in popped if not j.cancelled]
        return taken

    def _run(self) -> None:
        import time

        while True:
            jobs = self._take()
            if jobs is None:
                return
            if not jobs:
                continue
            texts = [t for j in jobs for t in j.texts]
            start = time.perf_counter()
            try:
                # batch_size: no cap on texts per call for encoders batched by count
                vecs = np.asarray(self.encoder.encode(texts, lang=jobs[0].lang, batch_size=len(texts)),
                                  dtype=np.float32)
            except Exception as exc:  # every waiting request gets the error, the worker lives on
                log.exception("encode failed")
                for j in jobs:
                    if not j.future.done():
                        j.future.set_exception(exc)
                continue
            took = max(time.perf_counter() - start, 1e-6)
            rate = len(texts) / took
            self._items_per_s = rate if self._items_per_s is None else 0.8 * self._items_per_s + 0.2 * rate
            if self.metrics:
                self.metrics.batch_items.observe(len(texts))
                self.metrics.embedded.inc(len(texts))
            row = 0
            for j in jobs:
                part = vecs[row : row + len(j.texts)]
                row += len(j.texts)
                if j.cancelled:
                    if self.metrics:
                        self.metrics.dropped.inc()
                    continue
                if not j.future.done():
                    j.future.set_result(Result(np.asarray(part, dtype=np.float32), self._tokens(j)))

    def _retry_after(self) -> int:
        rate = self._items_per_s or 50.0
        return max(1, int(round(self._queued / rate)))

    def _gauge(self) -> None:
        if self.metrics:
            self.metrics.queue.set(self._queued)
