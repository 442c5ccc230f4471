"""Streams groups in the group admin APIs and the offset APIs, over a real socket: ListGroups with type
`streams`, DescribeGroups (not a classic group), OffsetCommit/OffsetFetch checked against the member's
epoch, DeleteGroups of an empty group, and `streams.num.standby.replicas` as a GROUP config that
survives a restart and gives the next assignment its standbys."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kafkito.protocol.errors import ErrorCode
from tests.streams_groups.conftest import IMMEDIATE
from tests.streams_groups.test_wire import beat, describe, join, tasks
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

LIST_GROUPS, DESCRIBE_GROUPS, DELETE_GROUPS, OFFSET_COMMIT, OFFSET_FETCH = 16, 15, 42, 8, 9


def _commit(client: WireClient, group: str, member: str, epoch: int, offset: int) -> Any:
    answer = client.request(
        OFFSET_COMMIT,
        9,
        group_id=group,
        generation_id_or_member_epoch=epoch,
        member_id=member,
        group_instance_id=None,
        topics=[dict(name="words", partitions=[dict(partition_index=0, committed_offset=offset,
                                                    committed_leader_epoch=-1, committed_metadata="")])],
    )  # fmt: skip
    return answer.topics[0].partitions[0].error_code


def _fetch(client: WireClient, group: str) -> int:
    answer = client.request(
        OFFSET_FETCH,
        8,
        groups=[dict(group_id=group, topics=[dict(name="words", partition_indexes=[0])])],
        require_stable=False,
    )
    return int(answer.groups[0].topics[0].partitions[0].committed_offset)


def test_streams_group_in_list_describe_offsets_and_delete(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "words", 2)
    with WireClient(broker.bootstrap) as client:
        join(client, "sga", "m1")
        epoch = beat(client, "sga", "m1", 2, owned=[]).member_epoch
        listed = client.request(LIST_GROUPS, 5, states_filter=[], types_filter=["streams"]).groups
        assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed] == [
            ("sga", "streams", "Stable", "streams")
        ]
        classic = client.request(
            DESCRIBE_GROUPS, 6, groups=["sga"], include_authorized_operations=False
        ).groups[0]
        assert (classic.error_code, classic.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group sga is not a classic group.",
        )  # fmt: skip
        assert _commit(client, "sga", "m1", epoch - 1, 5) == ErrorCode.STALE_MEMBER_EPOCH
        assert _commit(client, "sga", "nobody", epoch, 5) == ErrorCode.UNKNOWN_MEMBER_ID
        assert _commit(client, "sga", "m1", epoch, 7) == ErrorCode.NONE
        assert _fetch(client, "sga") == 7
        deleted = client.request(DELETE_GROUPS, 2, groups_names=["sga"]).results[0]
        assert deleted.error_code == ErrorCode.NON_EMPTY_GROUP
        assert beat(client, "sga", "m1", -1).error_code == ErrorCode.NONE  # leaves: the group is empty
        assert describe(client, "sga").group_state == "Empty"
        assert client.request(DELETE_GROUPS, 2, groups_names=["sga"]).results[0].error_code == ErrorCode.NONE
        assert describe(client, "sga").error_code == ErrorCode.GROUP_ID_NOT_FOUND
        assert _fetch(client, "sga") == -1


def _set(bootstrap: str, group: str, name: str, value: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=10)


def _configs(bootstrap: str, group: str) -> dict[str, str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    described = admin.describe_configs([ConfigResource(ResourceType.GROUP, group)])
    entries = next(iter(described.values())).result(timeout=10)
    return {name: entry.value for name, entry in entries.items() if name.startswith("streams.")}


def test_num_standby_replicas_is_a_durable_group_config(
    broker_factory: Callable[..., ThreadBroker], tmp_path: Path
) -> None:
    data = tmp_path / "cfg"
    broker = broker_factory(data, **IMMEDIATE)
    assert _configs(broker.bootstrap, "sgc") == {
        "streams.heartbeat.interval.ms": "5000",
        "streams.num.standby.replicas": "0",
        "streams.session.timeout.ms": "45000",
    }
    _set(broker.bootstrap, "sgc", "streams.num.standby.replicas", "1")
    with pytest.raises(Exception, match="between 0 and 2"):
        _set(broker.bootstrap, "sgc", "streams.num.standby.replicas", "3")
    broker.stop()
    again = broker_factory(data, **IMMEDIATE)
    assert _configs(again.bootstrap, "sgc")["streams.num.standby.replicas"] == "1"
    create_topic(again.bootstrap, "words", 2)
    with WireClient(again.bootstrap) as client:
        join(client, "sgc", "m1")
        join(client, "sgc", "m2")
        e1 = beat(client, "sgc", "m1", 2, owned=[]).member_epoch
        e2 = beat(client, "sgc", "m2", 3, owned=[]).member_epoch
        beat(client, "sgc", "m1", e1, owned=[])
        beat(client, "sgc", "m2", e2, owned=[])
        members = describe(client, "sgc").members
        standby = sorted(t for m in members for t in tasks(m.target_assignment.standby_tasks))
        active = sorted(t for m in members for t in tasks(m.target_assignment.active_tasks))
        # Every active task has one standby, on the other member's process.
        assert sum(len(p) for _, p in standby) == sum(len(p) for _, p in active) > 0
