"""DescribeQuorum and ListConfigResources beyond their sweep: the metadata partition described at each
version (its offsets, times and directory ids are the broker's own: only whether they are set is
compared), the partitions it does not know, and the config resources listed by type."""

from __future__ import annotations

from typing import Any

from tests.conformance.framework import Side, scenario
from tests.conformance.scenarios_admin import create

DESCRIBE_QUORUM, LIST_CONFIG_RESOURCES = 55, 74
OWN = {"high_watermark", "log_end_offset", "last_fetch_timestamp", "last_caught_up_timestamp",
       "replica_directory_id", "port"}  # fmt: skip


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<set>" if k in OWN and v not in (None, -1) else _masked(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


@scenario("admin")
def describe_quorum(side: Side) -> None:
    metadata = [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]
    for v in (0, 1, 2):
        answer = side.quietly(DESCRIBE_QUORUM, v, topics=metadata)
        side.note(f"DescribeQuorum v{v} the metadata partition", _masked(answer.to_dict()))
    side.request(DESCRIBE_QUORUM, 2, "another partition and topic",
                 topics=[{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 1}]},
                         {"topic_name": side.name(), "partitions": [{"partition_index": 0}]}])  # fmt: skip


@scenario("admin")
def list_config_resources(side: Side) -> None:
    t = side.name()
    create(side, t, "a topic")
    for types, label in (([4], "brokers"), ([8], "broker loggers"), ([16], "client metrics"),
                         ([4, 8], "brokers and loggers"), ([3], "an unsupported type"),
                         ([2, 99], "topics and an unknown type")):  # fmt: skip
        side.request(LIST_CONFIG_RESOURCES, 1, label, resource_types=types)
    answer = side.quietly(LIST_CONFIG_RESOURCES, 1, resource_types=[2])
    names = {r.resource_name for r in answer.config_resources}
    listed = {"lists the new topic": t in names, "lists __consumer_offsets": "__consumer_offsets" in names}
    side.note("ListConfigResources v1 topics", listed)
