"""The log's rate limit: a token bucket per event name, on warnings and errors only."""

from __future__ import annotations

import pytest
import structlog

from kafkito.broker import log_rate
from kafkito.broker.log_rate import TokenBuckets


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_passes_then_the_rate_and_the_next_line_counts_the_dropped() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate=2.0, burst=3, clock=clock)
    assert [buckets.take("connection.closed") for _ in range(5)] == [0, 0, 0, None, None]
    clock.now += 0.4  # 0.8 of a token: still dropped
    assert buckets.take("connection.closed") is None
    clock.now += 0.1
    assert buckets.take("connection.closed") == 3  # the three dropped since the last line
    assert buckets.take("connection.closed") is None
    clock.now += 60  # refills up to the burst, not beyond
    assert [buckets.take("connection.closed") for _ in range(4)] == [1, 0, 0, None]


def test_event_names_have_their_own_buckets() -> None:
    buckets = TokenBuckets(rate=1.0, burst=1, clock=Clock())
    assert buckets.take("a") == 0
    assert buckets.take("a") is None
    assert buckets.take("b") == 0


def test_the_processor_limits_warnings_and_errors_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_rate, "BUCKETS", TokenBuckets(rate=1.0, burst=1, clock=Clock()))
    for _ in range(3):
        assert log_rate.rate_limit(None, "info", {"event": "topic.created"}) == {"event": "topic.created"}
    closed = {"event": "connection.closed"}
    assert log_rate.rate_limit(None, "warning", dict(closed)) == closed
    with pytest.raises(structlog.DropEvent):
        log_rate.rate_limit(None, "error", {"event": "connection.closed"})
