"""Offset commits from outside any group, and who may commit, fetch and delete offsets of each group
type, as Kafka 4's OffsetMetadataManager and group types answer (raw requests over TCP).

A commit with generation -1 stores offsets in an empty (or unknown) group whatever member id it names:
a KIP-848 consumer that assigns its partitions itself names the id it gave itself.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafkito.protocol.errors import ErrorCode
from tests.offsets.test_handlers import commit, fetch, wait_loaded
from tests.offsets.test_txn_offsets import Producer
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

COMMIT, FETCH, JOIN, SYNC, DESCRIBE_GROUPS, LIST_GROUPS, DELETE_OFFSETS = 8, 9, 11, 14, 15, 16, 47
CONSUMER_HEARTBEAT, SHARE_HEARTBEAT = 68, 76


@pytest.fixture
def served(broker: ThreadBroker) -> ThreadBroker:
    """The broker with topics t (3 partitions) and u (1), its offsets loaded."""
    assert broker.broker is not None
    logs = broker.broker.logs
    broker.call(lambda: (logs.create_topic("t", 3), logs.create_topic("u", 1)))
    wait_loaded(broker)
    return broker


def groups_listed(client: WireClient) -> dict[str, str]:
    response = client.request(LIST_GROUPS, 5, states_filter=[], types_filter=[])
    return {g.group_id: g.group_type for g in response.groups}


def delete_offsets(client: WireClient, group: str, partitions: list[tuple[str, int]]) -> Any:
    by_topic: dict[str, list[dict[str, int]]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append(dict(partition_index=p))
    return client.request(
        DELETE_OFFSETS, 0, group_id=group, topics=[dict(name=t, partitions=ps) for t, ps in by_topic.items()]
    )


def fetch_as(client: WireClient, group: str, member_id: str | None, epoch: int) -> int:
    """OffsetFetch v9 naming a member: the group's error."""
    response = client.request(
        FETCH,
        9,
        groups=[
            dict(
                group_id=group,
                member_id=member_id,
                member_epoch=epoch,
                topics=[dict(name="t", partition_indexes=[0])],
            )
        ],
        require_stable=False,
    )
    return int(response.groups[0].error_code)


@pytest.mark.parametrize("version", [1, 8, 9])
def test_generation_minus_one_commits_to_an_unknown_or_empty_group_whatever_member_id(
    served: ThreadBroker, version: int
) -> None:
    group = f"assigned-{version}"
    with WireClient(served.bootstrap) as client:
        own_id = str(uuid.uuid4())
        assert commit(client, version, group, {("t", 0): 5}, member_id=own_id) == {("t", 0): 0}
        # The group now exists, Empty, with no protocol: it only stores offsets.
        [described] = client.request(
            DESCRIBE_GROUPS, 5, groups=[group], include_authorized_operations=False
        ).groups
        assert (described.error_code, described.group_state, described.protocol_type) == (0, "Empty", "")
        assert commit(client, version, group, {("t", 1): 6}, member_id="someone-else") == {("t", 1): 0}
        assert fetch(client, 9, group, [("t", 0), ("t", 1)])[1] == {
            ("t", 0): (5, 4 if version >= 6 else -1, "meta", 0),
            ("t", 1): (6, 4 if version >= 6 else -1, "meta", 0),
        }


@pytest.mark.parametrize(
    ("version", "error"),
    [(1, ErrorCode.ILLEGAL_GENERATION), (8, ErrorCode.ILLEGAL_GENERATION), (9, ErrorCode.GROUP_ID_NOT_FOUND)],
)
def test_a_generation_of_a_group_that_does_not_exist(served: ThreadBroker, version: int, error: int) -> None:
    group = f"never-{version}"
    with WireClient(served.bootstrap) as client:
        assert commit(client, version, group, {("t", 0): 1}, generation=3, member_id="m") == {("t", 0): error}
        assert group not in groups_listed(client)


def test_a_classic_group_with_members_takes_commits_from_its_members_only(served: ThreadBroker) -> None:
    with WireClient(served.bootstrap) as client:
        join = dict(
            group_id="classic",
            session_timeout_ms=30_000,
            rebalance_timeout_ms=30_000,
            group_instance_id=None,
            protocol_type="consumer",
            protocols=[dict(name="range", metadata=b"")],
            reason=None,
        )
        first = client.request(JOIN, 9, member_id="", **join)
        joined = client.request(JOIN, 9, member_id=first.member_id, **join)
        member, generation = joined.member_id, joined.generation_id
        synced = client.request(
            SYNC, 5, group_id="classic", generation_id=generation, member_id=member, group_instance_id=None,
            protocol_type="consumer", protocol_name="range",
            assignments=[dict(member_id=member, assignment=b"")],
        )  # fmt: skip
        assert synced.error_code == 0
        cases = [
            (-1, "", ErrorCode.UNKNOWN_MEMBER_ID),
            (-1, "outsider", ErrorCode.UNKNOWN_MEMBER_ID),
            (-1, member, ErrorCode.ILLEGAL_GENERATION),
            (generation, "outsider", ErrorCode.UNKNOWN_MEMBER_ID),
            (generation + 1, member, ErrorCode.ILLEGAL_GENERATION),
            (generation, member, ErrorCode.NONE),
        ]
        for gen, member_id, error in cases:
            got = commit(client, 9, "classic", {("t", 0): 1}, generation=gen, member_id=member_id)
            assert got == {("t", 0): error}, (gen, member_id)
        # A classic group checks nobody on OffsetFetch, whatever v9 names.
        assert fetch_as(client, "classic", "outsider", 7) == ErrorCode.NONE


def test_a_consumer_group_checks_member_and_epoch_on_commit_fetch_and_txn_commit(
    served: ThreadBroker,
) -> None:
    member = str(uuid.uuid4())
    with WireClient(served.bootstrap) as client:
        joined = client.request(
            CONSUMER_HEARTBEAT, 0, group_id="kip848", member_id=member, member_epoch=0, instance_id=None,
            rack_id=None, rebalance_timeout_ms=30_000, subscribed_topic_names=["t"], server_assignor=None,
            topic_partitions=[],
        )  # fmt: skip
        assert joined.error_code == 0
        epoch = joined.member_epoch
        commits = [
            (9, -1, "", ErrorCode.UNKNOWN_MEMBER_ID),
            (9, -1, "outsider", ErrorCode.UNKNOWN_MEMBER_ID),
            (9, -1, member, ErrorCode.STALE_MEMBER_EPOCH),
            (9, epoch + 1, member, ErrorCode.STALE_MEMBER_EPOCH),
            (9, epoch, "outsider", ErrorCode.UNKNOWN_MEMBER_ID),
            (8, epoch, member, ErrorCode.UNSUPPORTED_VERSION),  # a new-protocol member needs v9
            (9, epoch, member, ErrorCode.NONE),
        ]
        for version, gen, member_id, error in commits:
            got = commit(client, version, "kip848", {("t", 0): 3}, generation=gen, member_id=member_id)
            assert got == {("t", 0): error}, (version, gen, member_id)

        fetches = [
            (None, -1, ErrorCode.NONE),  # an admin client: nobody named
            ("", -1, ErrorCode.UNKNOWN_MEMBER_ID),
            (member, -1, ErrorCode.STALE_MEMBER_EPOCH),
            (member, epoch + 1, ErrorCode.STALE_MEMBER_EPOCH),
            ("outsider", epoch, ErrorCode.UNKNOWN_MEMBER_ID),
            (member, epoch, ErrorCode.NONE),
        ]
        for member_id, member_epoch, error in fetches:
            assert fetch_as(client, "kip848", member_id, member_epoch) == error, (member_id, member_epoch)

        producer = Producer(client, "tx-kip848").init()
        assert producer.add_offsets("kip848") == 0
        txn = [
            (-1, "", ErrorCode.NONE),  # a TxnOffsetCommit naming nobody, as before v3
            (-1, "outsider", ErrorCode.UNKNOWN_MEMBER_ID),
            (epoch + 1, member, ErrorCode.ILLEGAL_GENERATION),
            (epoch, member, ErrorCode.NONE),
        ]
        for gen, member_id, error in txn:
            got = producer.commit(
                3, "kip848", {("t", 1): 4}, generation_id_or_member_epoch=gen, member_id=member_id
            )
            assert got == {("t", 1): error}, (gen, member_id)
        assert producer.end(commit=False) == 0

        deleted = delete_offsets(client, "kip848", [("t", 0), ("u", 0)])
        assert deleted.error_code == 0
        assert {(t.name, p.partition_index): p.error_code for t in deleted.topics for p in t.partitions} == {
            ("t", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
            ("u", 0): ErrorCode.NONE,
        }

        left = client.request(
            CONSUMER_HEARTBEAT, 0, group_id="kip848", member_id=member, member_epoch=-1, instance_id=None,
            rack_id=None, rebalance_timeout_ms=-1, subscribed_topic_names=None, server_assignor=None,
            topic_partitions=None,
        )  # fmt: skip
        assert left.error_code == 0
        # Empty now: a commit from outside the group is allowed, whatever member id it names.
        assert commit(client, 9, "kip848", {("t", 0): 9}, member_id="self-assigned") == {("t", 0): 0}
        assert groups_listed(client)["kip848"] == "consumer"


def test_a_share_group_refuses_offset_commits_and_has_no_committed_offsets(served: ThreadBroker) -> None:
    with WireClient(served.bootstrap) as client:
        beat = client.request(
            SHARE_HEARTBEAT, 1, group_id="shared", member_id=str(uuid.uuid4()), member_epoch=0, rack_id=None,
            subscribed_topic_names=["t"],
        )  # fmt: skip
        assert beat.error_code == 0
        for version in (8, 9):
            assert commit(client, version, "shared", {("t", 0): 1}) == {
                ("t", 0): ErrorCode.GROUP_ID_NOT_FOUND
            }
        assert commit(client, 9, "shared", {("t", 0): 1}, generation=1, member_id="m") == {
            ("t", 0): ErrorCode.GROUP_ID_NOT_FOUND
        }
        producer = Producer(client, "tx-shared").init()
        assert producer.add_offsets("shared") == 0
        assert producer.commit(3, "shared", {("t", 0): 1}) == {("t", 0): ErrorCode.GROUP_ID_NOT_FOUND}
        assert producer.end(commit=False) == 0
        assert fetch(client, 9, "shared", [("t", 0)]) == (0, {("t", 0): (-1, -1, "", 0)})
        assert fetch(client, 9, "shared", None) == (0, {})
        assert delete_offsets(client, "shared", [("t", 0)]).error_code == ErrorCode.GROUP_ID_NOT_FOUND
        # No classic group was made beside the share group.
        assert groups_listed(client) == {"shared": "share"}
