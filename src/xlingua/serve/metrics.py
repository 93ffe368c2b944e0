"""Prometheus metrics of one server (its own registry, so several apps in one process, as in
tests, do not collide)."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class Metrics:
    def __init__(self):
        self.registry = CollectorRegistry()
        self.requests = Counter("xlingua_requests", "HTTP requests by route and status code",
                                ["route", "code"], registry=self.registry)
        self.latency = Histogram("xlingua_request_seconds", "Request latency by route", ["route"],
                                 registry=self.registry,
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.queue = Gauge("xlingua_queue_texts", "Texts waiting for the model", registry=self.registry)
        self.batch_items = Histogram("xlingua_batch_texts", "Texts per model call", registry=self.registry,
                                     buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096))
        self.embedded = Counter("xlingua_embedded_texts", "Texts embedded", registry=self.registry)
        self.dropped = Counter("xlingua_dropped_requests", "Queued requests dropped because the client left",
                               registry=self.registry)
