"""Transactions (the V1 flow: AddPartitionsToTxn before producing): one that commits, one that aborts,
a producer fenced by a newer epoch, and what read_committed sees."""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

from typing import Any

from tests.conformance.batches import batch
from tests.conformance.framework import Side, scenario
from tests.conformance.readiness import RETRIED_AS_CLIENTS_DO
from tests.conformance.scenarios_admin import create

PRODUCE, FETCH, LIST_OFFSETS, FIND_COORDINATOR, INIT_PID = 0, 1, 2, 10, 22
ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = 24, 25, 26, 28
DESCRIBE_TXNS, LIST_TXNS, DESCRIBE_PRODUCERS = 65, 66, 61


def init(side: Side, tid: str, label: str) -> Any:
    side.find_coordinator(1, tid, "transaction")
    return side.request_settled(INIT_PID, 4, label, transactional_id=tid, transaction_timeout_ms=60_000,
                                producer_id=-1, producer_epoch=-1)  # fmt: skip


# A transaction's end completes after EndTxn answers (markers are written): until then the next call
# gets CONCURRENT_TRANSACTIONS, which clients retry, as they retry a coordinator that is not ready.
SETTLING = RETRIED_AS_CLIENTS_DO | {51}


def add_partition(side: Side, tid: str, pid: int, epoch: int, t: str, label: str) -> None:
    side.request_settled(ADD_PARTITIONS, 3, label, SETTLING, v3_and_below_transactional_id=tid,
                         v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
                         v3_and_below_topics=[{"name": t, "partitions": [0]}])  # fmt: skip


def produce(
    side: Side, tid: str, pid: int, epoch: int, seq: int, t: str, label: str, values: list[bytes]
) -> None:
    side.request(PRODUCE, 9, label, transactional_id=tid, acks=-1, timeout_ms=5000,
                 topic_data=[{"name": t, "partition_data": [{"index": 0, "records": batch(
                     values, producer_id=pid, epoch=epoch, sequence=seq, transactional=True)}]}])  # fmt: skip


def end(
    side: Side, tid: str, pid: int, epoch: int, commit: bool, label: str, topic: str | None = None
) -> None:
    """EndTxn; with `topic`, then wait until its markers are written (Kafka writes them after answering)."""
    side.request_settled(END_TXN, 4, label, SETTLING, transactional_id=tid, producer_id=pid, producer_epoch=epoch,
                         committed=commit)  # fmt: skip
    if topic is not None:
        side.wait_for(f"the markers of {label}", lambda: _latest(side, topic, 1) == _latest(side, topic, 0))


def _latest(side: Side, t: str, isolation: int) -> int | None:
    r = side.quietly(LIST_OFFSETS, 9, replica_id=-1, isolation_level=isolation,
                     topics=[{"name": t, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}])  # fmt: skip
    return None if r is None else int(r.topics[0].partitions[0].offset)


def read_committed(side: Side, t: str, label: str) -> None:
    side.request(FETCH, 12, label, replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                 isolation_level=1, session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                 topics=[{"topic": t, "partitions": [
                     {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                      "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}])  # fmt: skip
    side.request(LIST_OFFSETS, 9, f"{label}: last stable offset", replica_id=-1, isolation_level=1,
                 topics=[{"name": t, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}])  # fmt: skip


@scenario("sequence")
def transaction_commit_and_abort(side: Side) -> None:
    t, tid, g = side.name(), side.name("txn"), side.name("group")
    create(side, t, "one partition")
    r = init(side, tid, "first")
    pid, epoch = r.producer_id, r.producer_epoch
    add_partition(side, tid, pid, epoch, t, "add the partition")
    produce(side, tid, pid, epoch, 0, t, "two records", [b"c1", b"c2"])
    read_committed(side, t, "open transaction")
    side.request(
        ADD_OFFSETS,
        3,
        "the group's offsets",
        transactional_id=tid,
        producer_id=pid,
        producer_epoch=epoch,
        group_id=g,
    )
    side.find_coordinator(0, g, "group")
    side.request(TXN_OFFSET_COMMIT, 3, "offset 2", transactional_id=tid, group_id=g, producer_id=pid, producer_epoch=epoch,
                 generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                 topics=[{"name": t, "partitions": [{"partition_index": 0, "committed_offset": 2,
                                                     "committed_leader_epoch": -1, "committed_metadata": ""}]}])  # fmt: skip
    side.request(DESCRIBE_TXNS, 0, "ongoing", transactional_ids=[tid, side.name("never"), ""])
    end(side, tid, pid, epoch, True, "commit", t)
    read_committed(side, t, "after commit")
    add_partition(side, tid, pid, epoch, t, "second transaction")
    produce(side, tid, pid, epoch, 2, t, "one record", [b"a1"])
    end(side, tid, pid, epoch, False, "abort", t)
    read_committed(side, t, "after abort")
    end(side, tid, pid, epoch, True, "commit with no transaction open")
    side.request(
        LIST_TXNS, 1, "by state", state_filters=["CompleteAbort"], producer_id_filters=[], duration_filter=-1
    )
    side.request(DESCRIBE_PRODUCERS, 0, "the partition", topics=[{"name": t, "partition_indexes": [0]}])


@scenario("sequence")
def transaction_fenced_producer(side: Side) -> None:
    t, tid = side.name(), side.name("txn")
    create(side, t, "one partition")
    old = init(side, tid, "the first producer")
    pid, epoch = old.producer_id, old.producer_epoch
    add_partition(side, tid, pid, epoch, t, "first producer adds")
    produce(side, tid, pid, epoch, 0, t, "first producer writes", [b"x"])
    new = init(side, tid, "a second producer (fences the first)")
    side.note(
        "epoch bumped", {"same producer id": new.producer_id == pid, "epoch step": new.producer_epoch - epoch}
    )
    add_partition(side, tid, pid, epoch, t, "the fenced producer adds")
    produce(side, tid, pid, epoch, 1, t, "the fenced producer writes", [b"y"])
    end(side, tid, pid, epoch, True, "the fenced producer commits")
    end(side, tid, new.producer_id, new.producer_epoch, True, "the new producer commits nothing")
    end(side, side.name("never"), 1, 0, True, "an unknown transactional id")
    read_committed(side, t, "the fenced write was aborted")


@scenario("sequence")
def add_offsets_to_txn_ids(side: Side) -> None:
    """AddOffsetsToTxn checks the transactional id (empty: INVALID_REQUEST), not the group id."""
    tid = side.name("txn")
    r = init(side, tid, "a producer")
    pid, epoch = r.producer_id, r.producer_epoch
    for label, txn, group in (
        ("an empty transactional id", "", side.name("group")),
        ("an empty transactional id and group id", "", ""),
        ("an empty group id", tid, ""),
        ("a group", tid, side.name("group")),
    ):
        side.request(ADD_OFFSETS, 3, label, transactional_id=txn, producer_id=pid, producer_epoch=epoch,
                     group_id=group)  # fmt: skip
    side.request(DESCRIBE_TXNS, 0, "with the offsets partitions", transactional_ids=[tid])
    end(side, tid, pid, epoch, False, "abort")
