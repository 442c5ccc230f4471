"""ApiVersions v5 (KIP-1242): a client may name the cluster and node it means to reach, both or neither;
kafkito answers as Kafka 4.4 does (compared by tests/conformance, api_versions_intended_node)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

OTHER_CLUSTER = "AAAAAAAAAAAAAAAAAAAAAA"


def api_versions_v5(
    broker: ThreadBroker, cluster_id: str | None, node_id: int, software: str = "kafkito-test"
) -> Any:
    with WireClient(broker.bootstrap) as client:
        answer = client.request(
            18, 5, client_software_name=software, client_software_version="1.0", cluster_id=cluster_id,
            node_id=node_id,
        )  # fmt: skip
        # the connection stays usable: the client bootstraps again on its own
        assert client.request(18, 3, client_software_name="a", client_software_version="1").error_code == 0
    return answer


def cluster_id(broker: ThreadBroker) -> str:
    assert broker.broker is not None
    return broker.broker.services.cluster.cluster_id


def test_this_node_or_no_node_named_lists_the_versions(broker: ThreadBroker) -> None:
    for named in ((cluster_id(broker), 1), (None, -1)):
        answer = api_versions_v5(broker, *named)
        assert answer.error_code == 0
        ranges = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
        assert ranges[18] == (0, 5)
        assert answer.finalized_features


@pytest.mark.parametrize(
    ("named", "error"),
    [
        ("other cluster", ErrorCode.REBOOTSTRAP_REQUIRED),
        ("other node", ErrorCode.REBOOTSTRAP_REQUIRED),
        ("empty cluster id", ErrorCode.REBOOTSTRAP_REQUIRED),
        ("cluster alone", ErrorCode.INVALID_REQUEST),
        ("node alone", ErrorCode.INVALID_REQUEST),
    ],
)
def test_another_node_or_half_a_name_is_refused_with_nothing_listed(
    broker: ThreadBroker, named: str, error: ErrorCode
) -> None:
    ours = cluster_id(broker)
    cluster, node = {
        "other cluster": (OTHER_CLUSTER, 1), "other node": (ours, 2), "empty cluster id": ("", 1),
        "cluster alone": (ours, -1), "node alone": (None, 1),
    }[named]  # fmt: skip
    answer = api_versions_v5(broker, cluster, node)
    assert answer.error_code == error
    assert answer.api_keys == [] and not answer.supported_features
    assert answer.finalized_features_epoch == -1


def test_the_software_name_is_checked_before_the_node(broker: ThreadBroker) -> None:
    answer = api_versions_v5(broker, OTHER_CLUSTER, 1, software="-bad")
    assert answer.error_code == ErrorCode.INVALID_REQUEST
