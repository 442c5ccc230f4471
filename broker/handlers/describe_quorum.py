"""DescribeQuorum (55): the KRaft metadata quorum, as a combined broker-and-controller node answers it.

kafkito has no Raft log; its topic metadata log stands for `__cluster_metadata` partition 0. The
controller node (this one, or a cluster's lowest live node) is the leader and the one voter, caught
up now; any other live node is an observer with the same end offset; the high watermark is that end
offset. v2 adds the voters' directory ids (a fixed id derived from the cluster and node ids: kafkito
keeps no directory.id) and their endpoints: the first listener's advertised address, under its name.

A request that does not name exactly `__cluster_metadata` partition 0 gets UNKNOWN_TOPIC_OR_PARTITION
on each partition it names, as Kafka's Raft client answers it. Needs DESCRIBE on the cluster.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.listeners import listeners_of
from kafkito.protocol.errors import ErrorCode

API_KEY = 55
VERSIONS = (0, 2)

METADATA_TOPIC = "__cluster_metadata"
LEADER_EPOCH = 1  # a fresh single-voter quorum elects its leader in epoch 1
_DIRECTORY_IDS = uuid.UUID("6b61666b-6974-6f2d-7175-6f72756d0000")  # namespace of the directory ids


class PartitionData(Protocol):
    partition_index: int


class TopicData(Protocol):
    topic_name: str
    partitions: Sequence[PartitionData]


class DescribeQuorumRequest(Protocol):
    topics: Sequence[TopicData]


def _names_the_metadata_partition(request: DescribeQuorumRequest) -> bool:
    topics = request.topics
    return (
        len(topics) == 1
        and topics[0].topic_name == METADATA_TOPIC
        and len(topics[0].partitions) == 1
        and topics[0].partitions[0].partition_index == 0
    )


def directory_id(cluster_id: str, node_id: int) -> uuid.UUID:
    return uuid.uuid5(_DIRECTORY_IDS, f"{cluster_id}/{node_id}")


def handle(ctx: RequestContext, request: DescribeQuorumRequest) -> Any:
    if not _names_the_metadata_partition(request):
        unknown = [
            {"topic_name": t.topic_name,
             "partitions": [{"partition_index": p.partition_index,
                             "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION} for p in t.partitions]}
            for t in request.topics
        ]  # fmt: skip
        return ctx.response(error_code=0, error_message=None, topics=unknown, nodes=[])
    cluster = ctx.cluster
    leader = cluster.controller_id
    end = ctx.topics.metadata_end_offset()
    now = ctx.groups.clock.now_ms()

    def replica(node_id: int) -> dict[str, Any]:
        return dict(
            replica_id=node_id, replica_directory_id=directory_id(cluster.cluster_id, node_id),
            log_end_offset=end, last_fetch_timestamp=now, last_caught_up_timestamp=now,
        )  # fmt: skip

    partition = dict(
        partition_index=0, error_code=0, error_message=None, leader_id=leader, leader_epoch=LEADER_EPOCH,
        high_watermark=end, current_voters=[replica(leader)],
        observers=[replica(n) for n in cluster.live_nodes() if n != leader],
    )  # fmt: skip
    name = listeners_of(ctx.configs.config)[0].name
    host, port = cluster.endpoint(leader)
    nodes = [{"node_id": leader, "listeners": [{"name": name, "host": host, "port": port}]}]
    return ctx.response(
        error_code=0, error_message=None, nodes=nodes,
        topics=[{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
    )  # fmt: skip
