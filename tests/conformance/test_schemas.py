"""Each client-facing API's request and response schema, Kafka 4.4's against the codec's."""

from __future__ import annotations

import pytest

from tests.conformance.explained import unexplained
from tests.conformance.kafka_specs import api_specs
from tests.conformance.report import RESULTS
from tests.conformance.schemas import compare_api

CLIENT_FACING = [s for s in api_specs().values() if s.client_facing]


@pytest.mark.parametrize("api_key", [s.api_key for s in CLIENT_FACING], ids=[s.name for s in CLIENT_FACING])
def test_schema(api_key: int) -> None:
    outcome = compare_api(api_specs()[api_key])
    RESULTS.append(outcome)
    left = unexplained(outcome)
    assert not left, f"{len(left)} unexplained differences:\n" + "\n".join(
        f"  {d.describe()}" for _, d in left
    )
