"""Transactions V2 (KIP-890 part 2) over real TCP, with `transaction.version` 2 finalized as on a
fresh Kafka 4.1 cluster: the feature levels in ApiVersions, the epoch bumped at every transaction end,
partitions added by Produce v12 and TxnOffsetCommit v5 themselves, retried EndTxn, a restart in the
middle of a V2 transaction, and V1 clients (confluent-kafka, kafka-python) working as before.

The V2 producer is `tv2_wire.Tv2Producer` (raw requests): no installed client speaks V2. Records are
read back by confluent-kafka (read_committed and read_uncommitted), and by kafka-python and aiokafka
(read_committed) after V2 commits and aborts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.admin import create_topic
from tests.support.brokers import ProcessBroker, ThreadBroker
from tests.support.records import Rec
from tests.support.waiting import DEADLINE_S, wait_until
from tests.support.wire import WireClient
from tests.transactions_e2e.bounded import bounded
from tests.transactions_e2e.logview import UNSTABLE_OFFSET_COMMIT, offset_fetch, wait_settled
from tests.transactions_e2e.producers import PRODUCERS, make_producer, txn_id
from tests.transactions_e2e.readers import CLIENTS, append_sentinels, read
from tests.transactions_e2e.test_crash import port_outside_ephemeral_range
from tests.transactions_e2e.tv2_wire import Tv2Producer

PARTITIONS = 2
API_VERSIONS, DESCRIBE_TXNS, DESCRIBE_PRODUCERS = 18, 65, 61
PRODUCER_FENCED, INVALID_TXN_STATE = 90, 48
CONCURRENT_TRANSACTIONS, INVALID_PRODUCER_EPOCH = 51, 47


def describe(bootstrap: str, transactional_id: str) -> tuple[str, int, int]:
    """DescribeTransactions: (state, producer id, epoch)."""
    with WireClient(bootstrap) as wire:
        [found] = wire.request(DESCRIBE_TXNS, 0, transactional_ids=[transactional_id]).transaction_states
    return found.transaction_state, found.producer_id, found.producer_epoch


def read_values(
    bootstrap: str, topic: str, isolation: str, tag: str, client: str = "confluent-kafka"
) -> dict[int, list[bytes | None]]:
    append_sentinels(bootstrap, topic, PARTITIONS, tag)
    return read(client, bootstrap, topic, PARTITIONS, isolation, tag).values()


Levels = dict[str, tuple[int, int]]


def features(bootstrap: str, version: int) -> tuple[Levels, Levels, int]:
    """ApiVersions: supported (min, max), finalized (min, max) and the finalized epoch."""
    with WireClient(bootstrap) as wire:
        r = wire.request(API_VERSIONS, version, client_software_name="t", client_software_version="1")
    supported = {f.name: (f.min_version, f.max_version) for f in r.supported_features}
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in r.finalized_features}
    return supported, finalized, r.finalized_features_epoch


def test_api_versions_report_the_feature_levels_of_a_kafka_4_4_cluster(broker: ThreadBroker) -> None:
    finalized = {
        "metadata.version": (33, 33),
        "kraft.version": (1, 1),
        "transaction.version": (2, 2),
        "group.version": (1, 1),
        "eligible.leader.replicas.version": (1, 1),
        "share.version": (2, 2),
        "streams.version": (1, 1),
    }
    supported, got_finalized, epoch = features(broker.bootstrap, 4)
    assert supported == {
        "metadata.version": (7, 33),
        "kraft.version": (0, 1),
        "transaction.version": (0, 2),
        "group.version": (0, 1),
        "eligible.leader.replicas.version": (0, 1),
        "share.version": (0, 2),
        "streams.version": (0, 1),
    }
    assert (got_finalized, epoch) == (finalized, 0)
    # v3 leaves out supported features whose minimum is 0 (KAFKA-17011), as Kafka does.
    supported, got_finalized, _ = features(broker.bootstrap, 3)
    assert (supported, got_finalized) == ({"metadata.version": (7, 33)}, finalized)

    # A refused request (bad client software name) carries no features, as in Kafka. (Read raw:
    # kafka-python decodes an ApiVersions error response as v0.)
    with WireClient(broker.bootstrap) as wire:
        wire.send(API_VERSIONS, 3, client_software_name="-bad", client_software_version="1")
        frame = wire.recv_frame()
    assert frame is not None and frame[4:6] == b"\x00\x2a"  # INVALID_REQUEST
    assert b"transaction.version" not in frame and frame.endswith(b"\x00")  # no tagged field

    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        described = bounded(admin.describe_features, "kafka-python describe_features")
    finally:
        admin.close()
    assert described["transaction.version"]["finalized"] == (2, 2)
    assert described["metadata.version"]["supported"] == (7, 33)


def test_every_transaction_end_bumps_the_epoch_and_partitions_join_by_produce_v12(
    broker: ThreadBroker,
) -> None:
    topic = "tv2-epochs"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    tid = txn_id()
    p = Tv2Producer(broker.bootstrap, tid)
    try:
        assert p.init() == 0
        pid, epoch = p.producer_id, p.epoch
        committed: dict[int, list[bytes | None]] = {0: [], 1: []}
        everything: dict[int, list[bytes | None]] = {0: [], 1: []}
        for n, commit in enumerate((True, False, True, True)):
            values = {part: [f"t{n}-p{part}-{i}".encode() for i in range(3)] for part in range(PARTITIONS)}
            for part, vals in values.items():
                assert p.send(topic, part, vals) == 0  # no AddPartitionsToTxn: Produce v12 adds it
                everything[part] += vals
                if commit:
                    committed[part] += vals
            assert describe(broker.bootstrap, tid)[0] == "Ongoing"
            assert (p.commit() if commit else p.abort()) == 0
            assert (p.producer_id, p.epoch) == (pid, epoch + n + 1)
    finally:
        p.close()

    wait_settled(broker.bootstrap, topic, PARTITIONS)
    assert describe(broker.bootstrap, tid) == ("CompleteCommit", pid, epoch + 4)
    # The markers carry the bumped epoch: the partition's producer state is at the latest one.
    with WireClient(broker.bootstrap) as wire:
        r = wire.request(DESCRIBE_PRODUCERS, 0, topics=[dict(name=topic, partition_indexes=[0])])
    [active] = r.topics[0].partitions[0].active_producers
    assert (active.producer_id, active.producer_epoch) == (pid, epoch + 4)
    assert active.current_txn_start_offset == -1
    for client in CLIENTS:  # each skips the aborted V2 transactions by their markers
        assert read_values(broker.bootstrap, topic, "read_committed", f"rc-{client}", client) == committed
    assert read_values(broker.bootstrap, topic, "read_uncommitted", "ru") == everything


def test_retried_end_txn_and_the_fenced_epoch(broker: ThreadBroker) -> None:
    topic = "tv2-retry"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    tid = txn_id()
    p = Tv2Producer(broker.bootstrap, tid)
    try:
        assert p.init() == 0
        pid, epoch = p.producer_id, p.epoch
        assert p.send(topic, 0, [b"a"]) == 0
        first = p.end(True)
        assert (first.error_code, first.producer_id, first.producer_epoch) == (0, pid, epoch + 1)
        # The answer was lost: the same EndTxn again, under the old epoch, succeeds with the same answer.
        again = p.end(True, epoch=epoch)
        assert (again.error_code, again.producer_id, again.producer_epoch) == (0, pid, epoch + 1)
        assert p.end(False, epoch=epoch).error_code == INVALID_TXN_STATE
        assert p.end(True, epoch=epoch - 1).error_code == PRODUCER_FENCED
        # The old epoch cannot produce any more; the new one opens the next transaction.
        old = Tv2Producer(broker.bootstrap, tid)
        try:
            old.producer_id, old.epoch = pid, epoch
            assert old.send(topic, 1, [b"zombie"]) == INVALID_PRODUCER_EPOCH
        finally:
            old.close()
        assert p.send(topic, 1, [b"b"]) == 0
        assert p.commit() == 0
    finally:
        p.close()
    wait_settled(broker.bootstrap, topic, PARTITIONS)
    assert read_values(broker.bootstrap, topic, "read_committed", "end") == {0: [b"a"], 1: [b"b"]}


def test_a_new_instance_fences_an_open_v2_transaction_with_one_bump(broker: ThreadBroker) -> None:
    """KAFKA-19367: the fence and the abort of the zombie's transaction share one epoch bump; the
    new instance's retried InitProducerId bumps once more."""
    topic = "tv2-zombie"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    tid = txn_id()
    zombie, fresh = Tv2Producer(broker.bootstrap, tid), Tv2Producer(broker.bootstrap, tid)
    try:
        assert zombie.init() == 0
        pid, epoch = zombie.producer_id, zombie.epoch
        assert zombie.send(topic, 0, [b"zombie"]) == 0
        assert fresh.init() == CONCURRENT_TRANSACTIONS  # the zombie's transaction is being aborted
        wait_until(lambda: describe(broker.bootstrap, tid)[0] == "CompleteAbort", DEADLINE_S, "the abort")
        assert describe(broker.bootstrap, tid) == ("CompleteAbort", pid, epoch + 1)
        assert fresh.init() == 0
        assert (fresh.producer_id, fresh.epoch) == (pid, epoch + 2)
        assert zombie.commit() == PRODUCER_FENCED
        assert zombie.send(topic, 1, [b"zombie-again"]) == INVALID_PRODUCER_EPOCH
        assert fresh.send(topic, 1, [b"fresh"]) == 0
        assert fresh.commit() == 0
    finally:
        zombie.close()
        fresh.close()
    wait_settled(broker.bootstrap, topic, PARTITIONS)
    assert read_values(broker.bootstrap, topic, "read_committed", "end") == {0: [], 1: [b"fresh"]}


@pytest.mark.parametrize("commit", [True, False], ids=["commit", "abort"])
def test_txn_offset_commit_v5_adds_the_offsets_partition_itself(broker: ThreadBroker, commit: bool) -> None:
    topic, group = "tv2-offsets", f"g-{txn_id()}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    p = Tv2Producer(broker.bootstrap, txn_id())
    try:
        assert p.init() == 0
        assert p.send(topic, 0, [b"x"]) == 0
        # No AddOffsetsToTxn: TxnOffsetCommit v5 adds the group's __consumer_offsets partition.
        assert p.send_offsets(group, {(topic, 0): 5, (topic, 1): 7}) == {(topic, 0): 0, (topic, 1): 0}
        pending = offset_fetch(broker.bootstrap, group, topic, PARTITIONS, require_stable=True)
        assert {e for e, _ in pending.values()} == {UNSTABLE_OFFSET_COMMIT}
        assert (p.commit() if commit else p.abort()) == 0
    finally:
        p.close()
    want = {0: (0, 5), 1: (0, 7)} if commit else {0: (0, -1), 1: (0, -1)}
    wait_until(
        lambda: offset_fetch(broker.bootstrap, group, topic, PARTITIONS, require_stable=True) == want,
        DEADLINE_S, "the transaction's offsets to be decided",
    )  # fmt: skip


@pytest.mark.parametrize("producer_client", PRODUCERS)
def test_v1_clients_work_unchanged_with_transaction_version_2_finalized(
    producer_client: str, broker: ThreadBroker
) -> None:
    topic = f"tv1-{producer_client}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    assert features(broker.bootstrap, 3)[1]["transaction.version"] == (2, 2)
    tid = txn_id()
    producer = make_producer(producer_client, broker.bootstrap, tid)
    recs = {n: [Rec(i % PARTITIONS, None, f"{n}-{i}".encode()) for i in range(4)] for n in ("a", "b", "c")}
    try:
        producer.init()
        _, pid, epoch = describe(broker.bootstrap, tid)
        for name, commit in (("a", True), ("b", False), ("c", True)):
            producer.begin()
            producer.send(topic, recs[name])
            producer.commit() if commit else producer.abort()
        # They ignore the feature and speak V1: the epoch stays where InitProducerId put it.
        wait_until(lambda: describe(broker.bootstrap, tid)[0] == "CompleteCommit", DEADLINE_S, "the commit")
        assert describe(broker.bootstrap, tid) == ("CompleteCommit", pid, epoch)
    finally:
        producer.close()
    wait_settled(broker.bootstrap, topic, PARTITIONS)
    want: dict[int, list[bytes | None]] = {p: [] for p in range(PARTITIONS)}
    for r in recs["a"] + recs["c"]:
        want[r.partition].append(r.value)
    assert read_values(broker.bootstrap, topic, "read_committed", "end") == want


def test_restart_in_the_middle_of_a_v2_transaction(tmp_path: Path) -> None:
    """SIGKILL with a V2 transaction open (in its second epoch), restart: the producer commits it
    under the epoch it holds, and read_committed sees exactly the committed transactions."""
    broker = ProcessBroker(tmp_path / "data", port=port_outside_ephemeral_range()).start()
    topic = "tv2-restart"
    try:
        create_topic(broker.bootstrap, topic, PARTITIONS)
        p = Tv2Producer(broker.bootstrap, txn_id())
        assert p.init() == 0
        assert p.send(topic, 0, [b"first"]) == 0
        assert p.commit() == 0
        pid, epoch = p.producer_id, p.epoch
        assert p.send(topic, 0, [b"open-0"]) == 0
        assert p.send(topic, 1, [b"open-1"]) == 0
        broker.kill()
        broker.start()
        p.reconnect(broker.bootstrap)
        wait_until(lambda: _commit_when_loaded(p), DEADLINE_S, "the reloaded coordinator to take the commit")
        assert (p.producer_id, p.epoch) == (pid, epoch + 1)
        assert p.send(topic, 1, [b"after"]) == 0
        assert p.commit() == 0
        p.close()
        wait_settled(broker.bootstrap, topic, PARTITIONS)
        got = read_values(broker.bootstrap, topic, "read_committed", "end")
        assert got == {0: [b"first", b"open-0"], 1: [b"open-1", b"after"]}
    finally:
        broker.kill()


def _commit_when_loaded(p: Tv2Producer) -> bool:
    error = p.commit()
    if error in (14, 15):  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE: not yet
        return False
    assert error == 0, f"EndTxn after the restart: error {error}"
    return True
