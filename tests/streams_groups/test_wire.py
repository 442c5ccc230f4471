"""StreamsGroupHeartbeat (88), StreamsGroupDescribe (89) and StreamsGroupTopologyDescriptionUpdate (93)
over a real socket: the internal topics a heartbeat finds missing are created by the broker, members
get tasks once the topology is ready, and a group rebuilt from `__consumer_offsets` by a restart equals
the live one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkito.broker.offsets import dump
from kafkito.protocol.errors import ErrorCode
from tests.streams_groups.conftest import IMMEDIATE
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

HEARTBEAT, DESCRIBE, DESCRIPTION_UPDATE = 88, 89, 93
APP = "wc"
REPARTITION, CHANGELOG = f"{APP}-counts-repartition", f"{APP}-counts-changelog"
MISSING_INTERNAL_TOPICS = 3


def word_count(epoch: int = 1, source: str = "words") -> dict[str, Any]:
    """Subtopology 0 reads `source` and writes the repartition topic; 1 reads it into a store."""
    return dict(
        epoch=epoch,
        subtopologies=[
            dict(
                subtopology_id="0",
                source_topics=[source],
                source_topic_regex=[],
                state_changelog_topics=[],
                repartition_sink_topics=[REPARTITION],
                repartition_source_topics=[],
                copartition_groups=[],
            ),
            dict(
                subtopology_id="1",
                source_topics=[],
                source_topic_regex=[],
                state_changelog_topics=[
                    dict(
                        name=CHANGELOG,
                        partitions=0,
                        replication_factor=0,
                        topic_configs=[dict(key="cleanup.policy", value="compact")],
                    )
                ],
                repartition_sink_topics=[],
                repartition_source_topics=[
                    dict(name=REPARTITION, partitions=0, replication_factor=0, topic_configs=[])
                ],
                copartition_groups=[],
            ),
        ],
    )


def join(client: WireClient, group: str, member: str, version: int = 1, **fields: Any) -> Any:
    request: dict[str, Any] = dict(
        group_id=group,
        member_id=member,
        member_epoch=0,
        endpoint_information_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout_ms=30_000,
        topology=word_count(),
        active_tasks=[],
        standby_tasks=[],
        warmup_tasks=[],
        process_id=f"process-{member}",
        user_endpoint=None,
        client_tags=[],
        task_offsets=[],
        task_end_offsets=[],
        shutdown_application=False,
    )
    request.update(fields)
    return client.request(HEARTBEAT, version, **request)


def beat(client: WireClient, group: str, member: str, epoch: int, owned: Any = None, version: int = 1) -> Any:
    """A steady heartbeat: nothing changed but, when given, the tasks the member owns."""
    tasks = (
        dict(active_tasks=None, standby_tasks=None, warmup_tasks=None)
        if owned is None
        else dict(active_tasks=owned, standby_tasks=[], warmup_tasks=[])
    )
    return client.request(
        HEARTBEAT,
        version,
        group_id=group,
        member_id=member,
        member_epoch=epoch,
        endpoint_information_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout_ms=-1,
        topology=None,
        process_id=None,
        user_endpoint=None,
        client_tags=None,
        task_offsets=None,
        task_end_offsets=None,
        shutdown_application=False,
        **tasks,
    )


def describe(client: WireClient, group: str, version: int = 1) -> Any:
    fields: dict[str, Any] = dict(group_ids=[group], include_authorized_operations=False)
    if version >= 1:
        fields["include_topology_description"] = False
    return client.request(DESCRIBE, version, **fields).groups[0]


def tasks(answer: Any) -> list[tuple[str, list[int]]]:
    return sorted((t.subtopology_id, sorted(t.partitions)) for t in answer)


def test_first_heartbeat_creates_the_internal_topics_and_the_next_gets_tasks(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "words", 3)
    with WireClient(broker.bootstrap) as client:
        first = join(client, "sg", "m1")
        assert first.error_code == ErrorCode.NONE
        assert (first.member_id, first.member_epoch) == ("m1", 2)
        assert [s.status_code for s in first.status] == [MISSING_INTERNAL_TOPICS]
        assert first.active_tasks == []  # not ready: no tasks yet
        assert first.acceptable_recovery_lag == 10_000 and first.topology_description_required is False
        assert broker.call(lambda: broker.broker.services.topics.get(REPARTITION).partitions) == 3  # type: ignore[union-attr]
        changelog = broker.call(lambda: broker.broker.services.topics.get(CHANGELOG))  # type: ignore[union-attr]
        assert changelog.partitions == 3
        second = beat(client, "sg", "m1", 2, owned=[])
        assert second.error_code == ErrorCode.NONE and second.status == []
        assert second.member_epoch == 3
        assert tasks(second.active_tasks) == [("0", [0, 1, 2]), ("1", [0, 1, 2])]
        group = describe(client, "sg")
        assert (group.group_state, group.group_epoch, group.assignment_epoch) == ("Stable", 3, 3)
        assert group.assignor_name == "sticky" and group.topology_description_status == 0
        (sub0, sub1) = group.topology.subtopologies
        assert sub0.source_topics == ["words"] and sub0.repartition_sink_topics == [REPARTITION]
        assert [(t.name, t.partitions) for t in sub1.state_changelog_topics] == [(CHANGELOG, 3)]
        assert [(t.name, t.partitions) for t in sub1.repartition_source_topics] == [(REPARTITION, 3)]
        assert tasks(group.members[0].assignment.active_tasks) == [("0", [0, 1, 2]), ("1", [0, 1, 2])]


def test_v0_answers_the_recovery_lag_as_an_int32(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "words", 1)
    with WireClient(broker.bootstrap) as client:
        answer = join(client, "sg0", "m1", version=0)
        assert answer.error_code == ErrorCode.NONE and answer.acceptable_recovery_lag_legacy == 10_000


def test_unknown_group_and_group_of_another_type_are_not_found(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        group = describe(client, "nobody")
        assert (group.error_code, group.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND,
            "Group nobody not found.",
        )
        assert group.topology is None and group.assignor_name is None


def test_topology_description_update_is_unsupported_without_a_plugin(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        answer = client.request(
            DESCRIPTION_UPDATE,
            0,
            group_id="sg",
            member_id="m1",
            topology_epoch=1,
            topology_description=dict(subtopologies=[], global_stores=[]),
        )
        assert answer.error_code == ErrorCode.UNSUPPORTED_VERSION
        assert (
            answer.error_message == "The broker has no streams group topology description plugin configured."
        )


def _comparable(group: Any) -> Any:
    return group.to_dict() if hasattr(group, "to_dict") else repr(group)


def test_a_streams_group_rebuilt_from_the_log_equals_the_live_one(
    broker_factory: Callable[..., ThreadBroker], tmp_path: Path
) -> None:
    data = tmp_path / "restart"
    broker = broker_factory(data, **IMMEDIATE)
    create_topic(broker.bootstrap, "words", 4)
    with WireClient(broker.bootstrap) as client:
        join(client, "sg-r", "m1", user_endpoint=dict(host="h1", port=7000))
        first = beat(client, "sg-r", "m1", 2, owned=[])
        join(client, "sg-r", "m2", client_tags=[dict(key="zone", value="a")])
        # m1 revokes half of its tasks: a group mid-reconciliation, with tasks pending revocation.
        answer = beat(client, "sg-r", "m1", first.member_epoch, owned=tasks_wire(first.active_tasks))
        assert answer.error_code == ErrorCode.NONE
        live = describe(client, "sg-r")
        assert live.group_state == "Reconciling"
    live_state = broker.call(lambda: repr_state(broker))
    broker.stop()
    kinds = {r["key"]["type"] for r in dump.records(data, "sg-r")}
    assert {
        "streams_group_metadata",
        "streams_group_topology",
        "streams_group_member_metadata",
        "streams_group_target_assignment_metadata",
        "streams_group_target_assignment_member",
        "streams_group_current_member_assignment",
    } <= kinds

    again = broker_factory(data, **IMMEDIATE)
    with WireClient(again.bootstrap) as client:
        assert _comparable(describe(client, "sg-r")) == _comparable(live)
    assert again.call(lambda: repr_state(again)) == live_state


def tasks_wire(answer: Any) -> list[dict[str, Any]]:
    return [dict(subtopology_id=t.subtopology_id, partitions=list(t.partitions)) for t in answer]


def repr_state(broker: ThreadBroker) -> tuple[object, ...]:
    """Everything the coordinator keeps of the group, member by member (what a replay must rebuild)."""
    assert broker.broker is not None
    group = broker.broker.coordinator.get_streams_group("sg-r")
    assert group is not None
    members = tuple(sorted((m.member_id, repr(m)) for m in group.members.values()))
    return (
        group.state,
        group.group_epoch,
        group.assignment_epoch,
        group.metadata_hash,
        group.validated_topology_epoch,
        group.last_assignment_configs,
        group.topology,
        sorted(group.target.items()),
        sorted(group.active_owners.items()),
        sorted((t, sorted(h)) for t, h in group.replica_holders.items()),
        group.static_members,
        members,
        group.configured,
    )


def test_a_failed_internal_topic_creation_is_told_in_the_status(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "words", 1)
    topology = word_count()
    topology["subtopologies"][1]["state_changelog_topics"][0]["replication_factor"] = 3
    with WireClient(broker.bootstrap) as client:
        answer = join(client, "sgf", "m1", topology=topology)
        [status] = answer.status
        assert status.status_code == MISSING_INTERNAL_TOPICS
        missing = f"Internal topics are missing: {CHANGELOG}, {REPARTITION}"
        assert status.status_detail.startswith(f"{missing}; Creation failed: {CHANGELOG} (")
        assert status.status_detail.endswith(").")
        assert broker.call(lambda: broker.broker.services.topics.get(CHANGELOG)) is None  # type: ignore[union-attr]
