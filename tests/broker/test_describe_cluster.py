"""DescribeCluster answers for this broker, and refuses other endpoint types as a Kafka broker does."""

from __future__ import annotations

import pytest

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

DESCRIBE_CLUSTER = 60


def test_brokers_endpoint_lists_this_broker(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=False, endpoint_type=1
        )
    assert response.error_code == ErrorCode.NONE
    assert response.endpoint_type == 1
    assert [(b[0], b[2]) for b in response.brokers] == [(1, broker.port)]


@pytest.mark.parametrize(
    ("endpoint_type", "error"),
    [
        (2, ErrorCode.MISMATCHED_ENDPOINT_TYPE),
        (0, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE),
        (7, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE),
    ],
)
def test_other_endpoint_types_are_refused(broker: ThreadBroker, endpoint_type: int, error: ErrorCode) -> None:
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=False, endpoint_type=endpoint_type
        )
        assert response.error_code == error
        assert response.error_message
        assert response.brokers == []
        # The connection stays usable.
        again = client.request(DESCRIBE_CLUSTER, 0, include_cluster_authorized_operations=False)
        assert again.error_code == ErrorCode.NONE
