"""`__consumer_offsets` is created on first use, as Kafka creates it: FindCoordinator for a group, the
first group write, or a Metadata request naming it. A broker that no group uses does not make it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kafkito.broker.coordinator import TopicPartition
from kafkito.broker.offsets import OFFSETS_TOPIC
from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

FIND_COORDINATOR, COMMIT, METADATA = 10, 8, 3
PARTITION_0_AT_7 = dict(partition_index=0, committed_offset=7, committed_metadata="")


def _exists(broker: ThreadBroker) -> bool:
    assert broker.broker is not None
    logs = broker.broker.logs
    return broker.call(lambda: logs.topic(OFFSETS_TOPIC)) is not None


def test_find_coordinator_of_a_group_creates_it_and_of_a_transaction_does_not(broker: ThreadBroker) -> None:
    assert not _exists(broker)
    with WireClient(broker.bootstrap) as client:
        txn = client.request(FIND_COORDINATOR, 3, key="txn", key_type=1)
        assert txn.error_code == ErrorCode.NONE and not _exists(broker)
        group = client.request(FIND_COORDINATOR, 3, key="g", key_type=0)
        assert group.error_code == ErrorCode.NONE
    assert broker.broker is not None
    logs = broker.broker.logs
    info = broker.call(lambda: logs.topic(OFFSETS_TOPIC))
    assert info is not None and info.partitions == 50
    assert broker.call(lambda: logs.log_config(OFFSETS_TOPIC).compact)


def test_a_commit_without_find_coordinator_creates_it_and_survives_a_restart(
    broker_factory: Callable[..., ThreadBroker], tmp_path: Path
) -> None:
    data = tmp_path / "first-use"
    broker = broker_factory(data)
    with WireClient(broker.bootstrap) as client:
        client.request(METADATA, 4, topics=[dict(name="t")], allow_auto_topic_creation=True)
        assert not _exists(broker)
        response = client.request(
            COMMIT,
            8,
            group_id="g",
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            topics=[dict(name="t", partitions=[PARTITION_0_AT_7])],
        )
        assert response.topics[0].partitions[0].error_code == ErrorCode.NONE
    assert _exists(broker)
    broker.stop()
    again = broker_factory(data)
    assert again.broker is not None
    group = again.call(lambda: again.broker.coordinator.get_group("g"))  # type: ignore[union-attr]
    assert group.offsets[TopicPartition("t", 0)].offset == 7
