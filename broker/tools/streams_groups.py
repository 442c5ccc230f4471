"""Describing a KIP-1071 streams group (`group.protocol=streams`) with StreamsGroupDescribe (API 89), as
kafka-streams-groups.sh does: DescribeGroups knows only classic groups. The answer is put in
DescribeGroups' shape for `groups describe`: a member's active task (subtopology s, partition p) owns
partition p of each topic subtopology s reads (its source and repartition source topics)."""

from __future__ import annotations

from typing import Any


def describe_streams_group(client: Any, group: str) -> dict[str, Any] | None:
    """The group in the shape of kafka-python's `describe_groups` entries; None when the broker does not
    know it as a streams group (or does not have the API)."""
    from kafka.errors import KafkaError

    from kafkito.protocol.codec import build_request

    request = build_request(
        89, 0, group_ids=[group], include_authorized_operations=False
    )  # v0: every broker serving streams groups has it

    async def send() -> Any:
        node = await client._find_coordinator_id(group)
        return await client._manager.send(request, node_id=node)

    try:
        response = client._manager.run(send)
    except (KafkaError, OSError):
        return None
    (described,) = response.to_dict()["groups"]
    if described["error_code"] != 0 or described["group_state"] == "Dead":
        return None
    reads = _topics_read(described.get("topology"))
    return {
        "group_id": group,
        "group_state": described["group_state"],
        "protocol_type": "streams",
        "protocol_data": described.get("assignor_name") or "sticky",  # v1 names it; v0 has one assignor
        "members": [_member(m, reads) for m in described["members"]],
        "error": None,
    }


def _topics_read(topology: dict[str, Any] | None) -> dict[str, list[str]]:
    """Each subtopology's input topics (null until the topology is checked against the topics)."""
    reads: dict[str, list[str]] = {}
    for s in (topology or {}).get("subtopologies") or []:
        repartition = [t["name"] for t in s["repartition_source_topics"] or []]
        reads[s["subtopology_id"]] = list(s["source_topics"] or []) + repartition
    return reads


def _member(member: dict[str, Any], reads: dict[str, list[str]]) -> dict[str, Any]:
    owned: dict[str, set[int]] = {}
    for task in member["assignment"]["active_tasks"]:
        for topic in reads.get(task["subtopology_id"], []):
            owned.setdefault(topic, set()).update(task["partitions"])
    return {
        "member_id": member["member_id"],
        "group_instance_id": member["instance_id"],
        "client_id": member["client_id"],
        "client_host": member["client_host"],
        "member_assignment": {
            "assigned_partitions": [{"topic": t, "partitions": sorted(p)} for t, p in sorted(owned.items())]
        },
    }
