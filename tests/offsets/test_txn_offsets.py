"""Transactional offsets on the real `__consumer_offsets` log: the batches written, the markers,
reloading after a restart (open, committed and aborted transactions), and TxnOffsetCommit on the wire."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafkito.broker.coordinator import TopicPartition
from kafkito.broker.handlers import HANDLERS, txn_offset_commit
from kafkito.broker.log import cleaner
from kafkito.broker.log.batch import iter_headers
from kafkito.broker.offsets import OFFSETS_TOPIC
from kafkito.protocol.errors import ErrorCode
from tests.offsets.harness import OffsetsHarness
from tests.offsets.test_handlers import fetch, topics, wait_loaded  # noqa: F401 (fixture)
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
NONE = ErrorCode.NONE
UNSTABLE = ErrorCode.UNSTABLE_OFFSET_COMMIT
TXN_COMMIT = 28


def offset(o: OffsetsHarness, group: str, tp: TopicPartition = T0) -> int:
    return o.coordinator.fetch_offsets(group, [tp])[1][tp].offset


def stable_error(o: OffsetsHarness, group: str, tp: TopicPartition = T0) -> ErrorCode:
    return o.coordinator.fetch_offsets(group, [tp], require_stable=True)[1][tp].error


def pending(o: OffsetsHarness, group: str) -> dict[int, dict[TopicPartition, int]]:
    raw = o.coordinator.pending_transactional_offsets(group)
    return {pid: {tp: x.offset for tp, x in p.items()} for pid, p in raw.items()}


def headers(o: OffsetsHarness, group: str) -> list[Any]:
    plog = o.logs.get_log(OFFSETS_TOPIC, o.partition_of(group))
    return [h for _, h in iter_headers(plog.read(0, 1 << 20))]


def test_a_txn_commit_is_the_producers_transactional_batch_and_the_marker_a_control_batch(
    tmp_path: Path,
) -> None:
    o = OffsetsHarness(tmp_path)
    p = o.partition_of("g")
    assert o.h.txn_commit("g", {T0: 1, T1: 2}, producer_id=77, producer_epoch=3).result == {
        T0: NONE,
        T1: NONE,
    }
    assert o.h.txn_commit("g", {T0: 5}, producer_id=77, producer_epoch=3).result == {T0: NONE}
    assert o.h.end_txn(77, True, partition=p, producer_epoch=3).result is NONE
    assert o.h.txn_commit("g", {T0: 6}, producer_id=77, producer_epoch=3).result == {T0: NONE}
    first, second, marker, third = headers(o, "g")
    for h in (first, second, third):
        assert h.is_transactional and not h.is_control
        assert (h.producer_id, h.producer_epoch) == (77, 3)
    # Consecutive batches continue the producer's sequence: none is taken for a retry.
    assert (first.base_sequence, second.base_sequence, third.base_sequence) == (0, 2, 3)
    assert marker.is_control and marker.is_transactional and marker.producer_id == 77
    assert offset(o, "g") == 5 and offset(o, "g", T1) == 2
    assert pending(o, "g") == {77: {T0: 6}}


def test_restarts_keep_open_transactions_pending_and_apply_ended_ones(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    p = o.partition_of("g")
    o.h.commit("g", {T0: 1})
    o.h.txn_commit("g", {T0: 2, T1: 2}, producer_id=1)
    o.h.txn_commit("g", {T1: 3}, producer_id=2)
    o.h.end_txn(2, commit=False, partition=p)
    r = o.restart()
    assert offset(r, "g") == 1 and offset(r, "g", T1) == -1
    assert stable_error(r, "g") is UNSTABLE and pending(r, "g") == {1: {T0: 2, T1: 2}}
    # The transaction coordinator completes it after the restart.
    assert r.h.end_txn(1, commit=True, partition=p).result is NONE
    assert offset(r, "g") == 2 and offset(r, "g", T1) == 2 and stable_error(r, "g") is NONE
    r2 = r.restart()
    assert offset(r2, "g") == 2 and offset(r2, "g", T1) == 2 and pending(r2, "g") == {}
    r2.close()


def test_reloading_orders_plain_and_transactional_commits_as_the_log_does(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    p = o.partition_of("g")
    o.h.txn_commit("g", {T0: 10, T1: 11}, producer_id=1)
    o.h.commit("g", {T0: 7})  # more recent than producer 1's: it stays after the commit marker
    o.h.commit("g", {T1: 20})
    o.h.txn_commit("g", {T1: 30}, producer_id=2)  # more recent than the plain one: it wins
    o.h.txn_commit("g", {T0: 40}, producer_id=3)  # left open
    r = o.restart()
    assert pending(r, "g") == {1: {T0: 10, T1: 11}, 2: {T1: 30}, 3: {T0: 40}}
    for pid in (1, 2):
        assert r.h.end_txn(pid, commit=True, partition=p).result is NONE
    assert offset(r, "g") == 7 and offset(r, "g", T1) == 30
    r2 = r.restart()
    assert offset(r2, "g") == 7 and offset(r2, "g", T1) == 30 and pending(r2, "g") == {3: {T0: 40}}
    r3 = r2.restart()
    r3.h.end_txn(3, commit=True, partition=p)
    assert offset(r3, "g") == 40
    r3.close()


def test_an_offset_tombstone_drops_pending_offsets_on_reload_too(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    o.h.txn_commit("g", {T0: 1, T1: 1}, producer_id=1)
    assert o.coordinator.delete_offsets("g", [T0])[0] is NONE
    r = o.restart()
    assert pending(r, "g") == pending(o, "g") == {1: {T1: 1}}
    r.close()


def test_a_fenced_producer_epoch_is_refused_by_the_log(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    p = o.partition_of("g")
    assert o.h.txn_commit("g", {T0: 1}, producer_id=9, producer_epoch=4).result == {T0: NONE}
    stale = o.h.txn_commit("g", {T0: 2}, producer_id=9, producer_epoch=3)
    assert stale.result == {T0: ErrorCode.INVALID_PRODUCER_EPOCH}
    assert pending(o, "g") == {9: {T0: 1}}
    assert o.h.end_txn(9, True, partition=p, producer_epoch=3).result is ErrorCode.INVALID_PRODUCER_EPOCH
    assert pending(o, "g") == {9: {T0: 1}} and offset(o, "g") == -1
    assert o.h.end_txn(9, True, partition=p, producer_epoch=4).result is NONE
    assert offset(o, "g") == 1
    o.close()


def test_compaction_keeps_what_transactions_decided(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    o.h.txn_commit("g", {T0: 1, T1: 1}, producer_id=1)
    o.h.commit("g", {T0: 2})  # more recent than producer 1's T0
    o.h.end_txn(1, commit=True)
    o.h.commit("g", {T1: 3})
    o.h.txn_commit("g", {T1: 4}, producer_id=2)  # more recent than the plain T1
    o.h.end_txn(2, commit=True)
    o.h.txn_commit("g", {T0: 5, T1: 5}, producer_id=3)
    o.h.end_txn(3, commit=False)
    plog = o.logs.get_log(OFFSETS_TOPIC, 0)
    plog.roll()  # nothing at or past an open transaction is cleaned: it goes in the next segment
    o.h.txn_commit("g", {T0: 6}, producer_id=4)  # open
    before = (offset(o, "g"), offset(o, "g", T1), pending(o, "g"))
    assert before == (2, 4, {4: {T0: 6}})
    plan = cleaner.compact(plog, o.wall(), force=True)
    assert plan is not None and plan.records_after < plan.records_before
    r = o.restart()
    assert (offset(r, "g"), offset(r, "g", T1), pending(r, "g")) == before
    r.h.end_txn(4, commit=True)
    assert offset(r, "g") == 6
    r.close()


# -- the handler, on the wire ---------------------------------------------------------------------

INIT_PRODUCER_ID, ADD_OFFSETS, END_TXN = 22, 25, 26


@pytest.fixture
def txn_api(topics: ThreadBroker) -> ThreadBroker:  # noqa: F811
    """The broker, which serves TxnOffsetCommit."""
    assert HANDLERS[TXN_COMMIT] is txn_offset_commit
    return topics


@dataclass
class Producer:
    """A transactional producer on the wire: its id and epoch from InitProducerId."""

    client: WireClient
    transactional_id: str
    producer_id: int = -1
    producer_epoch: int = -1

    def init(self) -> Producer:
        r = self.client.request(
            INIT_PRODUCER_ID,
            3,
            transactional_id=self.transactional_id,
            transaction_timeout_ms=60_000,
            producer_id=-1,
            producer_epoch=-1,
        )
        assert r.error_code == 0, r
        self.producer_id, self.producer_epoch = r.producer_id, r.producer_epoch
        return self

    def add_offsets(self, group: str) -> int:
        r = self.client.request(
            ADD_OFFSETS,
            3,
            transactional_id=self.transactional_id,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            group_id=group,
        )
        return int(r.error_code)

    def end(self, commit: bool) -> int:
        r = self.client.request(
            END_TXN,
            3,
            transactional_id=self.transactional_id,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            committed=commit,
        )
        return int(r.error_code)

    def commit(
        self,
        version: int,
        group: str,
        partitions: dict[tuple[str, int], int],
        *,
        metadata: str | None = "m",
        **member: Any,
    ) -> dict[tuple[str, int], int]:
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (topic, p), value in partitions.items():
            by_topic.setdefault(topic, []).append(
                dict(
                    partition_index=p,
                    committed_offset=value,
                    committed_leader_epoch=2,
                    committed_metadata=metadata,
                )
            )
        fields: dict[str, Any] = dict(
            transactional_id=self.transactional_id,
            group_id=group,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            topics=[dict(name=t, partitions=ps) for t, ps in by_topic.items()],
        )
        if version >= 3:
            fields.update(generation_id_or_member_epoch=-1, member_id="", group_instance_id=None)
            fields.update(member)
        response = self.client.request(TXN_COMMIT, version, **fields)
        return {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}


def wait_for(check: Any) -> None:
    """The markers follow EndTxn's answer (as in Kafka): wait until `check()` holds."""
    deadline = time.monotonic() + 10
    while not check():
        assert time.monotonic() < deadline, "markers never written"
        time.sleep(0.01)


@pytest.mark.parametrize("version", range(0, 5))
def test_txn_offset_commit_at_every_version(txn_api: ThreadBroker, version: int) -> None:
    group = f"txn-{version}"
    with WireClient(txn_api.bootstrap) as client:
        producer = Producer(client, f"tx-{version}").init()
        assert producer.add_offsets(group) == 0
        answers = producer.commit(version, group, {("t", 0): 10, ("t", 1): 11, ("nope", 0): 1})
        assert answers == {("t", 0): 0, ("t", 1): 0, ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        assert fetch(client, 7, group, [("t", 0)], require_stable=True)[1] == {
            ("t", 0): (-1, -1, "", UNSTABLE)
        }
        assert fetch(client, 6, group, [("t", 0)])[1] == {("t", 0): (-1, -1, "", 0)}
        assert producer.end(commit=True) == 0
        epoch = 2 if version >= 2 else -1
        committed = {("t", 0): (10, epoch, "m", 0), ("t", 1): (11, epoch, "m", 0)}
        wait_for(lambda: fetch(client, 7, group, [("t", 0), ("t", 1)], require_stable=True)[1] == committed)


def test_txn_offset_commit_outside_the_transaction_is_refused(txn_api: ThreadBroker) -> None:
    with WireClient(txn_api.bootstrap) as client:
        producer = Producer(client, "tx-outside").init()
        for version, error in ((3, ErrorCode.INVALID_TXN_STATE), (4, ErrorCode.TRANSACTION_ABORTABLE)):
            assert producer.commit(version, "outside", {("t", 0): 1}) == {("t", 0): error}
        stale = Producer(client, "tx-outside", producer.producer_id, producer.producer_epoch - 1)
        assert stale.commit(2, "outside", {("t", 0): 1}) == {("t", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
        assert stale.commit(3, "outside", {("t", 0): 1}) == {("t", 0): ErrorCode.PRODUCER_FENCED}
        assert fetch(client, 7, "outside", [("t", 0)], require_stable=True)[1] == {("t", 0): (-1, -1, "", 0)}


def test_txn_offset_commit_checks_the_member_and_an_abort_drops_it(txn_api: ThreadBroker) -> None:
    with WireClient(txn_api.bootstrap) as client:
        producer = Producer(client, "tx-member").init()
        assert producer.add_offsets("ghost") == 0
        assert producer.commit(3, "ghost", {("t", 0): 1}, generation_id_or_member_epoch=2, member_id="m") == {
            ("t", 0): ErrorCode.ILLEGAL_GENERATION
        }
        assert producer.end(commit=False) == 0
        assert producer.add_offsets("known") == 0
        assert producer.commit(3, "known", {("t", 0): 1}) == {("t", 0): 0}
        assert producer.commit(4, "known", {("t", 0): 1}, generation_id_or_member_epoch=0, member_id="m") == {
            ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID
        }
        assert producer.commit(4, "known", {("t", 0): 1}, metadata="x" * 5000) == {
            ("t", 0): ErrorCode.OFFSET_METADATA_TOO_LARGE
        }
        assert producer.end(commit=False) == 0
        wait_for(
            lambda: (
                fetch(client, 7, "known", [("t", 0)], require_stable=True)[1] == {("t", 0): (-1, -1, "", 0)}
            )
        )


def test_the_retention_pass_spares_offsets_a_transaction_holds(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=1_000)
    o.h.commit("g", {T0: 1, T1: 1})
    o.h.txn_commit("g", {T0: 2})
    o.h.advance(2_000)
    assert o.manager.expire() == 1  # T1 only
    assert offset(o, "g") == 1 and offset(o, "g", T1) == -1
    assert o.coordinator.get_group("g") is not None
    o.h.end_txn(commit=False, partition=o.partition_of("g"))
    assert o.manager.expire() == 1
    assert o.coordinator.get_group("g") is None
    o.close()


def test_a_crash_mid_transaction_loses_no_acknowledged_txn_commit(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    p = o.partition_of("g")
    o.h.txn_commit("g", {T0: 1}, producer_id=1)
    o.h.end_txn(1, commit=True, partition=p)
    o.h.txn_commit("g", {T0: 2}, producer_id=1)  # acknowledged, then the broker dies
    r = o.restart(crash=True)
    assert offset(r, "g") == 1 and pending(r, "g") == {1: {T0: 2}}
    # The next transaction of the same producer continues its sequence on the reloaded log.
    assert r.h.txn_commit("g", {T1: 3}, producer_id=1).result == {T1: NONE}
    assert r.h.end_txn(1, commit=True, partition=p).result is NONE
    assert offset(r, "g") == 2 and offset(r, "g", T1) == 3
    r.close()
