"""Describing a KIP-848 consumer group (`group.protocol=consumer`) with ConsumerGroupDescribe (API 69),
as kafka-consumer-groups.sh does: DescribeGroups knows only classic groups and answers
GROUP_ID_NOT_FOUND for the others. The answer is put in DescribeGroups' shape for `groups describe`."""

from __future__ import annotations

from typing import Any


def describe_consumer_group(client: Any, group: str) -> dict[str, Any] | None:
    """The group in the shape of kafka-python's `describe_groups` entries; None when the broker does
    not know it as a consumer group (or does not have the API)."""
    from kafka.errors import KafkaError

    from kafkito.protocol.consumer_groups import ConsumerGroupDescribeRequest

    request = ConsumerGroupDescribeRequest(group_ids=[group], include_authorized_operations=False)

    async def send() -> Any:
        # kafka-python's admin has no ConsumerGroupDescribe: its connection manager sends ours.
        node = await client._find_coordinator_id(group)
        return await client._manager.send(request, node_id=node)

    try:
        response = client._manager.run(send)
    except (KafkaError, OSError):
        return None
    (described,) = response.to_dict()["groups"]
    if described["error_code"] != 0 or described["group_state"] == "Dead":
        return None
    return {
        "group_id": group,
        "group_state": described["group_state"],
        "protocol_type": "consumer",
        "protocol_data": described["assignor_name"],
        "members": [_member(m) for m in described["members"]],
        "error": None,
    }


def _member(member: dict[str, Any]) -> dict[str, Any]:
    owned = [
        {"topic": tp["topic_name"], "partitions": tp["partitions"]}
        for tp in member["assignment"]["topic_partitions"]
    ]
    return {
        "member_id": member["member_id"],
        "group_instance_id": member["instance_id"],
        "client_id": member["client_id"],
        "client_host": member["client_host"],
        "member_assignment": {"assigned_partitions": owned},
    }
