"""`kafkito transactions list|describe|abort`: what kafka-transactions.sh does.

list asks every broker (ListTransactions); describe asks the id's coordinator (DescribeTransactions):
state, producer id and epoch, timeout, start time and partitions; abort ends a hanging transaction on
one partition with an abort marker (WriteTxnMarkers to the partition's leader, as Kafka's Admin
abortTransaction sends it), the producer found by the transaction's first offset (DescribeProducers)
or named by --producer-id and --producer-epoch; force-terminate aborts a transactional id's open
transaction through its coordinator (InitProducerId, which fences the producer), as KIP-939's
`kafka-transactions.sh force-terminate` does.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from kafkito.broker.tools.connect import admin, kafka_errors
from kafkito.broker.tools.output import ToolError, emit, print_json

LIST_COLUMNS = ("TRANSACTIONAL-ID", "COORDINATOR", "PRODUCER-ID", "STATE")
NO_START = -1  # transaction_start_time_ms of a transaction that has not begun


def _state(state: Any) -> str:
    return str(getattr(state, "value", state))


def run_list(args: argparse.Namespace) -> int:
    client = admin(args)
    with kafka_errors():
        listed = client.list_transactions()
    rows = sorted(
        (t.transactional_id, node, t.producer_id, _state(t.state))
        for node, found in listed.items()
        for t in found
    )
    emit(LIST_COLUMNS, rows, args.json)
    return 0


def _time(ms: int) -> str:
    if ms < 0:
        return "None"
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def run_describe(args: argparse.Namespace) -> int:
    from kafka.errors import TransactionalIdNotFoundError

    client = admin(args)
    with kafka_errors():
        try:
            found = client.describe_transactions([args.transactional_id])[args.transactional_id]
        except TransactionalIdNotFoundError:
            raise ToolError(
                f"TransactionalIdNotFoundError: no transactional id {args.transactional_id!r}: "
                "`kafkito transactions list` shows them"
            ) from None
    partitions = sorted((tp.topic, tp.partition) for tp in found.topic_partitions)
    described = {
        "transactional_id": args.transactional_id,
        "coordinator": found.coordinator_id,
        "state": _state(found.state),
        "producer_id": found.producer_id,
        "producer_epoch": found.producer_epoch,
        "transaction_timeout_ms": found.transaction_timeout_ms,
        "transaction_start_time_ms": found.transaction_start_time_ms,
        "partitions": [f"{t}-{p}" for t, p in partitions],
    }
    if args.json:
        print_json(described)
        return 0
    emit(
        ("COORDINATOR", "TRANSACTIONAL-ID", "PRODUCER-ID", "PRODUCER-EPOCH", "STATE", "TIMEOUT-MS",
         "START-TIME", "PARTITIONS"),
        [(found.coordinator_id, args.transactional_id, found.producer_id, found.producer_epoch,
          described["state"], found.transaction_timeout_ms, _time(found.transaction_start_time_ms),
          ",".join(described["partitions"]))],
        as_json=False,
    )  # fmt: skip
    return 0


def _producer(client: Any, tp: Any, start_offset: int) -> tuple[int, int, int]:
    """The producer whose open transaction on `tp` began at `start_offset`: id, epoch, coordinator epoch."""
    with kafka_errors():
        states = client.describe_producers([tp])
    for producer in states[tp].active_producers:
        if producer.current_transaction_start_offset == start_offset:
            return producer.producer_id, producer.producer_epoch, producer.coordinator_epoch
    raise ToolError(
        f"no open transaction on {tp.topic}-{tp.partition} starts at offset {start_offset}: "
        "`kafkito transactions describe ID` names an open transaction's partitions"
    )


def run_abort(args: argparse.Namespace) -> int:
    from kafka import TopicPartition
    from kafka.admin import AbortTransactionSpec

    tp = TopicPartition(args.topic, args.partition)
    if args.start_offset is None and (args.producer_epoch is None or args.coordinator_epoch is None):
        raise ToolError("--producer-id needs --producer-epoch and --coordinator-epoch", 2)
    client = admin(args)
    if args.start_offset is not None:
        producer_id, epoch, coordinator_epoch = _producer(client, tp, args.start_offset)
    else:
        producer_id, epoch, coordinator_epoch = args.producer_id, args.producer_epoch, args.coordinator_epoch
    # A producer whose transaction hung before any marker reports coordinator epoch -1; 0 is at or
    # below every coordinator epoch, as kafka-transactions.sh takes it.
    coordinator_epoch = max(coordinator_epoch, 0)
    with kafka_errors():
        client.abort_transaction(AbortTransactionSpec(tp, producer_id, epoch, coordinator_epoch))
    print(
        f"Aborted the transaction of producer {producer_id} (epoch {epoch}) on {args.topic}-{args.partition}."
    )
    return 0


def run_force_terminate(args: argparse.Namespace) -> int:
    from kafkito.broker.tools.connect import producer

    fencing = producer(args, transactional_id=args.transactional_id)
    try:
        with kafka_errors():
            fencing.init_transactions()  # the coordinator aborts the open transaction and bumps the epoch
    finally:
        fencing.close(timeout=5)
    print(f"Aborted any open transaction of {args.transactional_id} (its producer is fenced).")
    return 0
