"""DescribeQuorum (55): the KRaft metadata quorum, as a combined broker-and-controller node answers it.

kafkito has no Raft log; its topic metadata log stands for `__cluster_metadata` partition 0. The
controller node (this one, or a cluster's lowest live node) is the leader and the one voter, caught
up now; any other live node is an observer with the same end offset; the high watermark is that end
offset. v2 adds the voters' directory ids (the zero id of a static voter, as `controller.quorum.voters`
gives them) and their endpoints: the first listener's advertised address, under its name (Kafka's is
its CONTROLLER listener; kafkito has none).

A request that does not name exactly `__cluster_metadata` partition 0 gets UNKNOWN_TOPIC_OR_PARTITION
on each partition it names, with the error's message, as Kafka's Raft client answers it. Needs
DESCRIBE on the cluster.
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
UNKNOWN_PARTITION = "This server does not host this topic-partition."  # Kafka's Errors message
STATIC_VOTER_DIRECTORY = uuid.UUID(int=0)  # a voter of controller.quorum.voters has no directory id


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


def handle(ctx: RequestContext, request: DescribeQuorumRequest) -> Any:
    if not _names_the_metadata_partition(request):
        error = {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "error_message": UNKNOWN_PARTITION}
        unknown = [
            {"topic_name": t.topic_name,
             "partitions": [{"partition_index": p.partition_index, **error} for p in t.partitions]}
            for t in request.topics
        ]  # fmt: skip
        return ctx.response(error_code=0, error_message=None, topics=unknown, nodes=[])
    cluster = ctx.cluster
    leader = cluster.controller_id
    end = ctx.topics.metadata_end_offset()
    now = ctx.groups.clock.now_ms()

    def replica(node_id: int) -> dict[str, Any]:
        return dict(
            replica_id=node_id, replica_directory_id=STATIC_VOTER_DIRECTORY,
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
