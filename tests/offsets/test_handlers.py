"""OffsetCommit, OffsetFetch and OffsetDelete over TCP with exact requests, at every advertised version."""

from __future__ import annotations

import select
import time
from typing import Any

import pytest

from kafkito.broker.handlers import offset_commit
from kafkito.broker.offsets import OFFSETS_TOPIC
from kafkito.broker.offsets.records import OffsetKey, OffsetValue
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import subscription
from tests.offsets.harness import OffsetsHarness
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

COMMIT, FETCH, METADATA, JOIN, SYNC, DELETE_OFFSETS = 8, 9, 3, 11, 14, 47


@pytest.fixture
def topics(broker: ThreadBroker) -> ThreadBroker:
    assert broker.broker is not None
    logs = broker.broker.logs
    broker.call(lambda: (logs.create_topic("t", 3), logs.create_topic("u", 1)))
    wait_loaded(broker)
    return broker


def wait_loaded(broker: ThreadBroker) -> None:
    """Group requests get COORDINATOR_LOAD_IN_PROGRESS until `__consumer_offsets` is replayed."""
    assert broker.broker is not None
    offsets = broker.broker.offsets
    deadline = time.monotonic() + 20
    while not broker.call(lambda: offsets.loaded):
        assert time.monotonic() < deadline, "offsets never finished loading"
        time.sleep(0.01)


def commit(
    client: WireClient,
    version: int,
    group: str,
    partitions: dict[tuple[str, int], int],
    *,
    generation: int = -1,
    member_id: str = "",
    metadata: str | None = "meta",
    retention_ms: int = -1,
) -> dict[tuple[str, int], int]:
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, p), offset in partitions.items():
        by_topic.setdefault(topic, []).append(
            dict(
                partition_index=p,
                committed_offset=offset,
                committed_leader_epoch=4,
                committed_metadata=metadata,
            )
        )
    response = client.request(
        COMMIT,
        version,
        group_id=group,
        generation_id_or_member_epoch=generation,
        member_id=member_id,
        group_instance_id=None,
        retention_time_ms=retention_ms,
        topics=[dict(name=t, partitions=ps) for t, ps in by_topic.items()],
    )
    return {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}


def fetch(
    client: WireClient, version: int, group: str, partitions: list[tuple[str, int]] | None, **kw: Any
) -> tuple[int, dict[tuple[str, int], tuple[int, int, str | None, int]]]:
    topics = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for t, p in partitions:
            by_topic.setdefault(t, []).append(p)
        topics = [dict(name=t, partition_indexes=ps) for t, ps in by_topic.items()]
    if version >= 8:
        response = client.request(FETCH, version, groups=[dict(group_id=group, topics=topics)], **kw)
        [g] = response.groups
        error, result_topics = g.error_code, g.topics
    else:
        response = client.request(FETCH, version, group_id=group, topics=topics, **kw)
        error, result_topics = (response.error_code if version >= 2 else 0), response.topics
    return error, {
        (t.name, p.partition_index): (
            p.committed_offset,
            p.committed_leader_epoch if version >= 5 else -1,
            p.metadata,
            p.error_code,
        )
        for t in result_topics
        for p in t.partitions
    }


@pytest.mark.parametrize("version", range(2, 10))
def test_commit_then_fetch_at_every_commit_version(topics: ThreadBroker, version: int) -> None:
    group = f"simple-{version}"
    with WireClient(topics.bootstrap) as client:
        assert commit(client, version, group, {("t", 0): 10, ("t", 2): 12}) == {("t", 0): 0, ("t", 2): 0}
        epoch = 4 if version >= 6 else -1
        error, got = fetch(client, 6, group, [("t", 0), ("t", 1), ("t", 2)])
        assert error == 0
        assert got == {
            ("t", 0): (10, epoch, "meta", 0),
            ("t", 1): (-1, -1, "", 0),
            ("t", 2): (12, epoch, "meta", 0),
        }


@pytest.mark.parametrize("version", range(1, 10))
def test_fetch_at_every_version(topics: ThreadBroker, version: int) -> None:
    group = f"fetch-{version}"
    with WireClient(topics.bootstrap) as client:
        commit(client, 9, group, {("t", 1): 7, ("u", 0): 3})
        error, got = fetch(client, version, group, [("t", 1), ("u", 0)])
        epoch = 4 if version >= 5 else -1
        assert (error, got) == (0, {("t", 1): (7, epoch, "meta", 0), ("u", 0): (3, epoch, "meta", 0)})
        if version >= 2:  # null topics: every committed partition
            assert fetch(client, version, group, None)[1] == got
        unknown_group = fetch(client, version, "nobody", [("t", 0)])
        assert unknown_group == (0, {("t", 0): (-1, -1, "", 0)})


def test_fetch_v8_answers_each_group_on_its_own(topics: ThreadBroker) -> None:
    assert topics.broker is not None
    store = topics.broker.offsets.sink
    with WireClient(topics.bootstrap) as client:
        commit(client, 9, "ready", {("t", 0): 1})
        loading_group = next(
            f"l{i}" for i in range(1000) if store.partition_for(f"l{i}") != store.partition_for("ready")
        )
        topics.call(lambda: store.loading.add(store.partition_for(loading_group)))
        response = client.request(
            FETCH,
            8,
            groups=[
                dict(group_id="ready", topics=[dict(name="t", partition_indexes=[0])]),
                dict(group_id=loading_group, topics=None),
            ],
            require_stable=True,
        )
        ready, loading = response.groups
        assert (ready.error_code, ready.topics[0].partitions[0].committed_offset) == (0, 1)
        assert (loading.error_code, loading.topics) == (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [])
        # v1 has no top-level error: each partition asked for carries it.
        error, got = fetch(client, 1, loading_group, [("t", 0), ("t", 1)])
        assert got == {p: (-1, -1, "", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) for p in [("t", 0), ("t", 1)]}
        error, got = fetch(client, 3, loading_group, [("t", 0)])
        assert (error, got) == (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, {})
        topics.call(store.loading.clear)


def test_commit_errors_per_partition_and_per_group(topics: ThreadBroker) -> None:
    with WireClient(topics.bootstrap) as client:
        unknown = commit(client, 9, "g", {("t", 0): 1, ("t", 3): 1, ("nope", 0): 1})
        assert unknown == {("t", 0): 0, ("t", 3): 3, ("nope", 0): 3}
        too_big = commit(client, 9, "g", {("t", 1): 1}, metadata="x" * 4097)
        assert too_big == {("t", 1): ErrorCode.OFFSET_METADATA_TOO_LARGE}
        assert commit(client, 9, "new", {("t", 0): 1}, generation=3, member_id="m") == {
            ("t", 0): ErrorCode.GROUP_ID_NOT_FOUND
        }
        assert commit(client, 9, "g", {("t", 0): 1}, generation=0, member_id="m") == {
            ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID
        }
        # Null metadata is stored as "".
        commit(client, 9, "g", {("t", 2): 5}, metadata=None)
        assert fetch(client, 9, "g", [("t", 2)])[1] == {("t", 2): (5, 4, "", 0)}


@pytest.mark.parametrize("version", range(2, 10))
def test_commit_response_lists_every_partition_in_request_order(topics: ThreadBroker, version: int) -> None:
    """The hand-encoded response, read back by kafka-python: each topic and partition as asked, in order,
    duplicates included; the same past CHUNK partitions, where the request is handled in chunks."""
    with WireClient(topics.bootstrap) as client:
        for unknown in (2, offset_commit.CHUNK + 1):
            asked = [("u", 0), ("nope", 7), ("t", 2), ("t", 9), ("t", 2)] + [
                ("big", i) for i in range(unknown)
            ]
            by_topic: dict[str, list[dict[str, Any]]] = {}
            for t, p in asked:
                by_topic.setdefault(t, []).append(
                    dict(
                        partition_index=p,
                        committed_offset=1,
                        committed_leader_epoch=-1,
                        committed_metadata="",
                    )
                )
            response = client.request(
                COMMIT,
                version,
                group_id=f"order-{version}",
                generation_id_or_member_epoch=-1,
                member_id="",
                group_instance_id=None,
                retention_time_ms=-1,
                topics=[dict(name=t, partitions=ps) for t, ps in by_topic.items()],
            )
            got = [(t.name, p.partition_index, p.error_code) for t in response.topics for p in t.partitions]
            unknown_tp = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            expected = [
                (t, p, unknown_tp if t in ("nope", "big") or (t, p) == ("t", 9) else ErrorCode.NONE)
                for t, ps in by_topic.items()
                for p in (q["partition_index"] for q in ps)
            ]
            assert got == expected
            if version >= 3:
                assert response.throttle_time_ms == 0


def test_a_huge_commit_lets_other_connections_be_served_meanwhile(topics: ThreadBroker) -> None:
    """Issue 12, defect 7: a commit of 50,000 topics is handled in chunks; another client's request sent
    after it is answered before it (the decoding of the huge request itself still holds the loop)."""
    huge = [
        dict(
            name=f"topic-{i}",
            partitions=[
                dict(partition_index=0, committed_offset=1, committed_leader_epoch=-1, committed_metadata="")
            ],
        )
        for i in range(50_000)
    ]
    with WireClient(topics.bootstrap, timeout=60) as big, WireClient(topics.bootstrap) as other:
        big.send(
            COMMIT,
            9,
            group_id="huge",
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            retention_time_ms=-1,
            topics=huge,
        )
        other.request(METADATA, 1, topics=[])
        # poll, not select: a long test session may hold descriptors numbered above select's 1024.
        waiting = select.poll()
        waiting.register(big.sock, select.POLLIN)
        assert not waiting.poll(0), "the huge commit was answered before the small request"
        response = big.recv(COMMIT, 9)
        assert {p.error_code for t in response.topics for p in t.partitions} == {
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        }
        assert len(response.topics) == 50_000


def test_commit_from_a_group_member_and_rebalance_in_progress(topics: ThreadBroker) -> None:
    with WireClient(topics.bootstrap) as client:
        protocols = [dict(name="range", metadata=subscription("t"))]
        join = dict(
            group_id="members",
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            group_instance_id=None,
            protocol_type="consumer",
            protocols=protocols,
            reason=None,
        )
        first = client.request(JOIN, 9, member_id="", **join)
        joined = client.request(JOIN, 9, member_id=first.member_id, **join)
        assert joined.error_code == 0
        member, generation = joined.member_id, joined.generation_id
        # Joined but not synced: CompletingRebalance.
        assert commit(client, 9, "members", {("t", 0): 1}, generation=generation, member_id=member) == {
            ("t", 0): ErrorCode.REBALANCE_IN_PROGRESS
        }
        sync = client.request(
            SYNC,
            5,
            group_id="members",
            generation_id=generation,
            member_id=member,
            group_instance_id=None,
            protocol_type="consumer",
            protocol_name="range",
            assignments=[dict(member_id=member, assignment=b"a")],
        )
        assert sync.error_code == 0
        assert commit(client, 9, "members", {("t", 0): 1}, generation=generation, member_id=member) == {
            ("t", 0): 0
        }
        assert commit(client, 9, "members", {("t", 0): 2}, generation=generation + 1, member_id=member) == {
            ("t", 0): ErrorCode.ILLEGAL_GENERATION
        }
        assert commit(client, 9, "members", {("t", 0): 2}) == {("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}


def test_retention_time_of_v2_to_v4_is_an_explicit_expiry_on_disk(
    topics: ThreadBroker, tmp_path: Any
) -> None:
    assert topics.broker is not None
    with WireClient(topics.bootstrap) as client:
        assert commit(client, 2, "ret", {("t", 0): 8}, retention_ms=3_600_000) == {("t", 0): 0}
        assert commit(client, 5, "noret", {("t", 0): 9}, retention_ms=3_600_000) == {("t", 0): 0}
    group = topics.call(lambda: topics.broker.coordinator.get_group("ret"))  # type: ignore[union-attr]
    offset = group.offsets[next(iter(group.offsets))]
    assert offset.expire_timestamp_ms == offset.commit_timestamp_ms + 3_600_000
    other = topics.call(lambda: topics.broker.coordinator.get_group("noret"))  # type: ignore[union-attr]
    assert next(iter(other.offsets.values())).expire_timestamp_ms is None
    topics.stop()
    reader = OffsetsHarness(topics.config.data_dir, partitions=50)
    [(key, value)] = reader.records("ret")
    assert key == OffsetKey("ret", "t", 0)
    assert isinstance(value, OffsetValue) and value.expire_timestamp == value.commit_timestamp + 3_600_000
    reader.close()


def test_offset_delete(topics: ThreadBroker) -> None:
    with WireClient(topics.bootstrap) as client:
        commit(client, 9, "del", {("t", 0): 1, ("t", 1): 2})
        response = client.request(
            DELETE_OFFSETS,
            0,
            group_id="del",
            topics=[
                dict(name="t", partitions=[dict(partition_index=0)]),
                dict(name="nope", partitions=[dict(partition_index=0)]),
            ],
        )
        assert response.error_code == 0
        assert {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions} == {
            ("t", 0): 0,
            ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        }
        assert fetch(client, 9, "del", None)[1] == {("t", 1): (2, 4, "meta", 0)}
        missing = client.request(
            DELETE_OFFSETS,
            0,
            group_id="missing",
            topics=[dict(name="t", partitions=[dict(partition_index=0)])],
        )
        assert (missing.error_code, missing.topics) == (ErrorCode.GROUP_ID_NOT_FOUND, [])


def test_offsets_topic_is_internal_and_hidden_unless_asked_for(topics: ThreadBroker) -> None:
    with WireClient(topics.bootstrap) as client:
        everything = client.request(
            METADATA,
            12,
            topics=None,
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )
        assert OFFSETS_TOPIC not in {t.name for t in everything.topics}
        asked = client.request(
            METADATA,
            12,
            topics=[dict(name=OFFSETS_TOPIC, topic_id=None)],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )
        [topic] = asked.topics
        assert (topic.error_code, topic.is_internal, len(topic.partitions)) == (0, True, 50)
