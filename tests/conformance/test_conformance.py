"""Each scenario against Kafka 4.4 and kafkito; a difference not in explained.toml fails it."""

from __future__ import annotations

import pytest

from tests.conformance import (  # noqa: F401 - registers the scenarios
    scenarios_admin,
    scenarios_consumer_groups,
    scenarios_delete_records,
    scenarios_edge_cases,
    scenarios_groups,
    scenarios_kafka44,
    scenarios_outside_groups,
    scenarios_quorum,
    scenarios_requests,
    scenarios_share,
    scenarios_streams,
    scenarios_sweep,
    scenarios_txn,
)
from tests.conformance.conftest import Pair
from tests.conformance.explained import unexplained
from tests.conformance.framework import SCENARIOS

# The sweep first: its listings of every topic then hold the internal topics only.
ORDER = sorted(SCENARIOS, key=lambda n: (SCENARIOS[n].area != "api", n))


@pytest.mark.parametrize("name", ORDER)
def test_scenario(pair: Pair, name: str) -> None:
    outcome = pair.run(SCENARIOS[name])
    left = unexplained(outcome)
    assert not left, f"{len(left)} unexplained differences:\n" + "\n".join(
        f"  {label}: {d.describe()}" for label, d in left
    )
