"""The hand-encoded Metadata answer is, byte for byte, what the codec encodes, at every version."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafkito.broker.handlers import metadata
from kafkito.broker.handlers.metadata_encode import (
    NOT_REQUESTED,
    Broker,
    PartitionLists,
    TopicEntry,
    empty_partitions,
    encode_metadata,
)
from kafkito.broker.security.supported_operations import (
    CLUSTER_OPERATIONS,
    CLUSTER_OPERATIONS_BITS,
    TOPIC_OPERATIONS,
    TOPIC_OPERATIONS_BITS,
)
from kafkito.protocol.codec import build_response

NODE = 3
TOPIC_ID = uuid.UUID("6b1c1a7e-2f5c-4b8e-9a51-0c5e3f6d7a21")


def _partitions(count: int) -> list[dict[str, Any]]:
    return [
        dict(
            error_code=0,
            partition_index=p,
            leader_id=NODE,
            leader_epoch=0,
            replica_nodes=[NODE],
            isr_nodes=[NODE],
            offline_replicas=[],
        )
        for p in range(count)
    ]


@pytest.mark.parametrize("version", range(metadata.VERSIONS[0], metadata.VERSIONS[1] + 1))
def test_hand_encoded_metadata_is_what_the_codec_encodes(version: int) -> None:
    rack = "r1" if version >= 1 else None
    unknown_name = None if version >= 12 else "gone"
    expected = build_response(
        3,
        version,
        throttle_time_ms=0,
        brokers=[dict(node_id=NODE, host="broker.example", port=9092, rack=rack)],
        cluster_id="cluster-é",
        controller_id=NODE,
        topics=[
            dict(
                error_code=0, name="orders", topic_id=TOPIC_ID, is_internal=False, partitions=_partitions(3),
                authorized_operations=set(TOPIC_OPERATIONS),
            ),
            dict(error_code=0, name="__consumer_offsets", topic_id=TOPIC_ID, is_internal=True, partitions=[]),
            dict(error_code=100, name=unknown_name, topic_id=None, is_internal=False, partitions=[]),
        ],
        authorized_operations=set(CLUSTER_OPERATIONS),
    ).encode()  # fmt: skip
    lists = PartitionLists()
    got = encode_metadata(
        version,
        [Broker(NODE, "broker.example", 9092, rack)],
        "cluster-é",
        NODE,
        [
            TopicEntry(0, "orders", TOPIC_ID, False, lists.get(3, NODE, version), TOPIC_OPERATIONS_BITS),
            TopicEntry(0, "__consumer_offsets", TOPIC_ID, True, lists.get(0, NODE, version), NOT_REQUESTED),
            TopicEntry(100, unknown_name, None, False, empty_partitions(version)),
        ],
        CLUSTER_OPERATIONS_BITS,
    )
    assert got == bytes(expected)


def test_a_large_topics_partition_list_is_encoded_once() -> None:
    """Every Metadata of a 5,000-partition topic reuses the list encoded for the first one."""
    lists = PartitionLists()
    first = lists.get(5_000, NODE, 12)
    assert lists.get(5_000, NODE, 12) is first
    assert lists.get(5_000, NODE, 11) is not first  # each version has its own
