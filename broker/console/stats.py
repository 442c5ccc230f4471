"""The overview's figures: counts, uptime, and produce and fetch rates sampled only when asked.

The broker counts nothing extra for the console: messages in are the growth of the partitions' log
end offsets, fetches the `Fetches.parked` counter every Fetch request already passes. A rate is the
change between now and the oldest kept sample at least `WINDOW_S` old.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

WINDOW_S = 5.0
SAMPLES_KEPT = 64


class Rates:
    """Samples (time, messages in, fetches) taken when the overview is read."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self._samples: deque[tuple[float, int, int]] = deque(maxlen=SAMPLES_KEPT)

    def sample(self, messages: int, fetches: int) -> dict[str, float]:
        now = time.monotonic()
        samples = self._samples
        while len(samples) > 1 and now - samples[1][0] >= WINDOW_S:
            samples.popleft()
        samples.append((now, messages, fetches))
        first = samples[0]
        elapsed = now - first[0]
        if elapsed <= 0:
            return {"produce_messages_per_s": 0.0, "fetch_requests_per_s": 0.0}
        return {
            "produce_messages_per_s": round(max(messages - first[1], 0) / elapsed, 1),
            "fetch_requests_per_s": round(max(fetches - first[2], 0) / elapsed, 1),
        }


def user_topics(broker: Broker) -> list[Any]:
    return sorted((t for t in broker.logs.topics() if not t.name.startswith("__")), key=lambda t: t.name)


def messages_in(broker: Broker) -> int:
    """The sum of every user partition's log end offset (what producers appended, ever)."""
    logs = broker.logs
    return sum(
        logs.get_log(t.name, p).log_end_offset for t in user_topics(broker) for p in range(t.partitions)
    )


def overview(broker: Broker, rates: Rates) -> dict[str, Any]:
    topics = user_topics(broker)
    coordinator = broker.coordinator
    groups = len(coordinator.groups()) + len(coordinator.consumer_groups())
    host, port = broker.advertised
    return {
        "node_id": broker.config.node_id,
        "cluster_id": broker.cluster_id,
        "bootstrap": f"{host}:{port}",
        "uptime_s": round(time.monotonic() - rates.started, 1),
        "topics": len(topics),
        "partitions": sum(t.partitions for t in topics),
        "groups": groups,
        "connections": len(broker.connections),
        **rates.sample(messages_in(broker), broker.fetches.parked),
    }
