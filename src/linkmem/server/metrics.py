"""``GET /metrics`` in Prometheus text format: requests and latency per route, and the store's
size. Each app has its own registry (several apps may live in one process, as in tests);
with ``--workers N`` every worker process counts its own requests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from linkmem.server.limits import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from linkmem.memory import Memory

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class StoreSize(Collector):
    """Memories and entities in the store, read when scraped."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def collect(self) -> Iterator[GaugeMetricFamily]:
        store = self.memory.store
        backend = store.info().backend
        for name, count in (
            ("memories", store.count_memories),
            ("entities", store.count_entities),
        ):
            gauge = GaugeMetricFamily(
                f"linkmem_{name}", f"{name.capitalize()} in the store", labels=["backend"]
            )
            gauge.add_metric([backend], float(count()))
            yield gauge


class Metrics:
    """The registry of one app, and the ASGI middleware that feeds it."""

    def __init__(self, memory: Memory) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "linkmem_requests",
            "HTTP requests by route, method and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "linkmem_request_seconds",
            "HTTP request latency by route and method",
            ["method", "route"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(StoreSize(memory))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts every request and times it, labelled by the route's path template."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def seen(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, seen)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            method = scope["method"]
            self.metrics.requests.labels(method, route, str(status)).inc()
            self.metrics.latency.labels(method, route).observe(time.perf_counter() - started)
