"""JSON-ready descriptions of consumer-group keys and values, for `kafkito offsets dump`.

Topic ids are printed as UUID strings with the topic's name beside them when the data directory
still knows it (None otherwise); assignments as lists of {topic_id, topic, partitions}.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from typing import Any

from kafkito.broker.offsets.consumer_records import (
    RECORD_TYPE_NAMES,
    ConsumerGroupKey,
    ConsumerValue,
    CurrentMemberAssignmentValue,
    GroupMetadataValue,
    MemberMetadataValue,
    PartitionMetadataValue,
    RegularExpressionValue,
    TargetAssignmentMemberValue,
    TargetAssignmentMetadataValue,
    TopicPartitions,
)

TopicNames = Mapping[uuid.UUID, str]


def describe_key(key: ConsumerGroupKey) -> dict[str, Any]:
    out: dict[str, Any] = {"type": RECORD_TYPE_NAMES[key.record_type], "group": key.group}
    if key.member_id is not None:
        out["member_id"] = key.member_id
    if key.regex is not None:
        out["regex"] = key.regex
    return out


def _partitions(assignment: TopicPartitions, names: TopicNames) -> list[dict[str, Any]]:
    return [
        {"topic_id": str(topic_id), "topic": names.get(topic_id), "partitions": list(parts)}
        for topic_id, parts in assignment
    ]


def _member(v: MemberMetadataValue) -> dict[str, Any]:
    classic = v.classic_member
    return {
        "instance_id": v.instance_id,
        "rack_id": v.rack_id,
        "client_id": v.client_id,
        "client_host": v.client_host,
        "subscribed_topic_names": list(v.subscribed_topic_names),
        "subscribed_topic_regex": v.subscribed_topic_regex,
        "rebalance_timeout_ms": v.rebalance_timeout_ms,
        "server_assignor": v.server_assignor,
        "classic_member": None
        if classic is None
        else {
            "session_timeout_ms": classic.session_timeout_ms,
            "supported_protocols": [
                {"name": name, "metadata": base64.b64encode(meta).decode()}
                for name, meta in classic.supported_protocols
            ],
        },
    }


def _partition_metadata(v: PartitionMetadataValue) -> dict[str, Any]:
    return {
        "topics": [
            {
                "topic_id": str(t.topic_id),
                "topic": t.name,
                "num_partitions": t.num_partitions,
                "partition_racks": {str(p): list(racks) for p, racks in t.partition_racks},
            }
            for t in v.topics
        ]
    }


def describe_value(value: ConsumerValue, names: TopicNames) -> dict[str, Any]:
    if isinstance(value, GroupMetadataValue):
        out: dict[str, Any] = {"epoch": value.epoch, "metadata_hash": value.metadata_hash}
        if value.creation_time_ms != -1:
            out["creation_time_ms"] = value.creation_time_ms
        return out
    if isinstance(value, MemberMetadataValue):
        return _member(value)
    if isinstance(value, TargetAssignmentMetadataValue):
        return {"assignment_epoch": value.assignment_epoch}
    if isinstance(value, TargetAssignmentMemberValue):
        return {"assignment": _partitions(value.topic_partitions, names)}
    if isinstance(value, CurrentMemberAssignmentValue):
        return {
            "member_epoch": value.member_epoch,
            "previous_member_epoch": value.previous_member_epoch,
            "state": value.state,
            "assigned": _partitions(value.assigned_partitions, names),
            "pending_revocation": _partitions(value.partitions_pending_revocation, names),
        }
    if isinstance(value, RegularExpressionValue):
        return {"topics": list(value.topics), "version": value.version, "timestamp": value.timestamp}
    return _partition_metadata(value)
