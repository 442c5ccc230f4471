"""The brokers of the streams group tests assign at once: no initial rebalance delay and no assignment
interval (tests of those two set them), so each heartbeat's answer is the one its change implies."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.brokers import ThreadBroker

IMMEDIATE = dict(
    group_initial_rebalance_delay_ms=0,
    group_streams_initial_rebalance_delay_ms=0,
    group_streams_assignment_interval_ms=0,
)


@pytest.fixture
def broker(broker_factory: Callable[..., ThreadBroker]) -> ThreadBroker:
    return broker_factory(**IMMEDIATE)
