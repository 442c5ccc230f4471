"""Streams groups in the group admin APIs and the offset APIs, over a real socket: ListGroups with type
`streams`, DescribeGroups (not a classic group), OffsetCommit/OffsetFetch checked against the member's
epoch, DeleteGroups of an empty group, and `streams.num.standby.replicas` as a GROUP config that
survives a restart and gives the next assignment its standbys."""

# ruff: noqa: E501 - REFUSALS is a table, one refusal a line

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kafkito.protocol.errors import ErrorCode
from tests.streams_groups.conftest import IMMEDIATE
from tests.streams_groups.test_wire import beat, describe, join, tasks, word_count
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

LIST_GROUPS, DESCRIBE_GROUPS, DELETE_GROUPS, OFFSET_COMMIT, OFFSET_FETCH = 16, 15, 42, 8, 9


def _commit(client: WireClient, group: str, member: str, epoch: int, offset: int, version: int = 9) -> Any:
    answer = client.request(
        OFFSET_COMMIT,
        version,
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
        # A member commits with v9+, as Kafka 4.4 requires of KIP-1071 members; the member is checked first.
        assert _commit(client, "sga", "m1", epoch, 8, version=8) == ErrorCode.UNSUPPORTED_VERSION
        assert _commit(client, "sga", "nobody", epoch, 8, version=8) == ErrorCode.UNKNOWN_MEMBER_ID
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
        "streams.assignment.interval.ms": "0",
        "streams.assignor.name": "sticky",
        "streams.heartbeat.interval.ms": "5000",
        "streams.initial.rebalance.delay.ms": "0",
        "streams.num.standby.replicas": "0",
        "streams.rack.aware.assignment.tags": "",
        "streams.session.timeout.ms": "45000",
    }
    _set(broker.bootstrap, "sgc", "streams.num.standby.replicas", "1")
    with pytest.raises(
        Exception, match=re.escape("streams.num.standby.replicas must be less than or equal to 2")
    ):
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


# Kafka 4.4's answers to each streams.* GROUP config (measured on the reference with its defaults).
REFUSALS = [
    ("streams.initial.rebalance.delay.ms", "-1", "Value must be at least 0"),
    ("streams.initial.rebalance.delay.ms", "x", "Not a number of type INT"),
    ("streams.assignment.interval.ms", "16000", "streams.assignment.interval.ms must be in the range 0 to 15000 inclusive."),
    ("streams.num.warmup.replicas", "21", "streams.num.warmup.replicas must be less than or equal to 20"),
    ("streams.acceptable.recovery.lag", "-1", "Value must be at least 0"),
    ("streams.task.offset.interval.ms", "0", "Value must be at least 1"),
    ("streams.task.offset.interval.ms", "14999", "streams.task.offset.interval.ms must be greater than or equal to 15000"),
    ("streams.assignor.offload.enable", "maybe", "Expected value to be either true or false"),
    ("streams.assignor.name", "nope", "streams.assignor.name 'nope' is not a registered task assignor. Registered assignors are: [sticky]."),
    ("streams.session.timeout.ms", "1", "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive."),
]  # fmt: skip
ACCEPTED = [
    ("streams.initial.rebalance.delay.ms", "5000"),
    ("streams.assignment.interval.ms", "15000"),
    ("streams.num.warmup.replicas", "20"),
    ("streams.acceptable.recovery.lag", "99999999999"),
    ("streams.task.offset.interval.ms", "15000"),
    ("streams.rack.aware.assignment.tags", "zone,rack"),
    ("streams.assignor.offload.enable", "false"),
    ("streams.assignor.name", "sticky"),
]


@pytest.mark.parametrize(("name", "value", "message"), REFUSALS)
def test_a_streams_group_config_kafka_refuses_is_refused_with_its_message(
    broker: ThreadBroker, name: str, value: str, message: str
) -> None:
    with pytest.raises(Exception, match=re.escape(message)):
        _set(broker.bootstrap, "sgr", name, value)


def test_every_streams_group_config_is_kept_and_the_listed_ones_described(
    broker: ThreadBroker,
) -> None:
    for name, value in ACCEPTED:
        _set(broker.bootstrap, "sgk", name, value)
    described = _configs(broker.bootstrap, "sgk")
    assert described["streams.initial.rebalance.delay.ms"] == "5000"
    assert described["streams.assignment.interval.ms"] == "15000"
    assert described["streams.rack.aware.assignment.tags"] == "zone,rack"
    # Kafka's internal group configs are kept but not listed.
    assert not {"streams.num.warmup.replicas", "streams.acceptable.recovery.lag"} & set(described)
    create_topic(broker.bootstrap, "words", 1)
    with WireClient(broker.bootstrap) as client:
        joined = join(client, "sgk", "m1")
        # Each heartbeat answers the group's recovery lag and task offset interval.
        assert (joined.acceptable_recovery_lag, joined.task_offset_interval_ms) == (99_999_999_999, 15_000)
        assert next(s.status_detail for s in joined.status).startswith("Assignment delayed")


def test_kafkito_groups_describe_shows_a_streams_groups_partitions(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "words", 2)
    with WireClient(broker.bootstrap) as client:
        joined = join(client, "sgd", "m1")
        beat(client, "sgd", "m1", joined.member_epoch, owned=[])  # the topology is ready: tasks
        command = [sys.executable, "-m", "kafkito", "groups", "describe", "sgd", "--json"]
        command += ["--bootstrap-server", broker.bootstrap]
        done = subprocess.run(command, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
    rows = json.loads(done.stdout)["sgd"]
    owned = sorted((r["topic"], r["partition"], r["consumer_id"]) for r in rows)
    # Subtopology 0 reads words, 1 the repartition topic: m1 runs every task of both.
    assert owned == [(t, p, "m1") for t in ("wc-counts-repartition", "words") for p in (0, 1)]


def test_offsets_of_a_source_topic_are_kept_while_the_group_has_members_even_not_ready(
    broker: ThreadBroker,
) -> None:
    """Kafka 4.4's isSubscribedToTopic: any member makes the topology's source topics subscribed, ready or
    not (a group whose source topic is missing is NotReady); an empty group's offsets may be deleted."""
    create_topic(broker.bootstrap, "words", 1)
    topology = word_count()
    topology["subtopologies"][0]["source_topics"] = ["words", "absent"]  # one source topic missing
    with WireClient(broker.bootstrap) as client:
        assert join(client, "sgn", "m1", topology=topology).error_code == ErrorCode.NONE
        assert describe(client, "sgn").group_state == "NotReady"
        offset_delete = dict(
            group_id="sgn", topics=[dict(name="words", partitions=[dict(partition_index=0)])]
        )
        refused = client.request(47, 0, **offset_delete)
        assert refused.error_code == ErrorCode.NONE
        assert refused.topics[0].partitions[0].error_code == ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
        assert beat(client, "sgn", "m1", -1).error_code == ErrorCode.NONE
        deleted = client.request(47, 0, **offset_delete)
        assert deleted.topics[0].partitions[0].error_code == ErrorCode.NONE
