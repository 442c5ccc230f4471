"""Transactional produce throughput against plain idempotent produce (confluent-kafka), in one run,
and the log writes a transaction's commit costs.

Run: .venv/bin/python bench/transactions.py [--records 50000] [--size 1024] [--per-txn 100] [--runs 3]
     [--partitions 3]

Each run starts a fresh `kafkito serve` (on disk, a temp dir) and measures, in alternating order, one
idempotent producer (enable.idempotence, acks=all, linger.ms=5) and one transactional producer
(the same settings plus transactional.id; begin, `--per-txn` records, commit) sending `--records`
records of `--size` bytes round robin over the partitions of a topic of their own, until every record
is acknowledged and, for the transactional one, every transaction committed. The table reports the
median records/s and MB/s of each, their ratio, and the broker's CPU seconds per 10,000 records.

Then, on the last run's broker, transactions of 10, 100 and 1,000 records (20 of each) are committed
and the log writes they cost are counted from end offsets (ListOffsets) read before and after:
records appended to `__transaction_state` (all its partitions), and control batches (markers) in the
data partitions (end offset growth minus the records sent: one per partition the transaction touched,
here all of them). A commit's cost must not grow with the records the transaction holds. (Each size
uses a new producer, whose InitProducerId writes one more `__transaction_state` record: 1/20 each.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from dataclasses import dataclass
from typing import Any

from procs import cpu_seconds, kafkito_command, kafkito_executable, running  # bench/ is on sys.path
from producing import produce_waiting  # bench/producing.py

TXN_STATE = "__transaction_state"
TXN_STATE_PARTITIONS = 50  # transaction.state.log.num.partitions, Kafka's default
WRITE_SIZES = (10, 100, 1000)  # each touches every partition (round robin)
WRITE_TXNS = 20


@dataclass(frozen=True)
class Rate:
    records_s: float
    mb_s: float
    cpu_per_10k: float  # broker CPU seconds per 10,000 records


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def _producer(bootstrap: str, transactional: bool) -> Any:
    from confluent_kafka import Producer

    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all",
                            "enable.idempotence": True, "compression.type": "none"}  # fmt: skip
    if transactional:
        conf["transactional.id"] = f"bench-{uuid.uuid4().hex[:8]}"
    return Producer(conf)


def _send(producer: Any, topic: str, count: int, size: int, partitions: int, failed: list[object]) -> None:
    payload = os.urandom(size)

    def on_delivery(err: object, msg: object) -> None:
        if err is not None:
            failed.append(err)

    for i in range(count):
        produce_waiting(producer, topic, payload, partition=i % partitions, on_delivery=on_delivery)
        producer.poll(0)


def produce(bootstrap: str, topic: str, count: int, size: int, partitions: int, per_txn: int) -> float:
    """Seconds to send `count` records and have all acknowledged (and committed, with `per_txn` > 0)."""
    producer = _producer(bootstrap, per_txn > 0)
    failed: list[object] = []
    producer.list_topics(topic, timeout=10)
    if per_txn:
        producer.init_transactions(30)
    t0 = time.perf_counter()
    if per_txn:
        for start in range(0, count, per_txn):
            producer.begin_transaction()
            _send(producer, topic, min(per_txn, count - start), size, partitions, failed)
            producer.commit_transaction(60)  # flushes, then commits
    else:
        _send(producer, topic, count, size, partitions, failed)
    left = producer.flush(120)
    elapsed = time.perf_counter() - t0
    if left or failed:
        raise RuntimeError(f"{left} records undelivered, {len(failed)} failed: {failed[:3]}")
    return elapsed


def end_offsets(bootstrap: str, topic: str, partitions: int) -> int:
    """The sum of the partitions' high watermarks."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]
    wanted = {TopicPartition(topic, p): latest for p in range(partitions)}
    futures = admin.list_offsets(wanted, request_timeout=30)
    return sum(f.result(30).offset for f in futures.values())


def writes_per_commit(bootstrap: str, partitions: int) -> list[tuple[int, float, float]]:
    """(records per transaction, __transaction_state appends per transaction, markers per transaction)."""
    out = []
    for size in WRITE_SIZES:
        topic = f"writes-{size}"
        create_topic(bootstrap, topic, partitions)
        state0 = end_offsets(bootstrap, TXN_STATE, TXN_STATE_PARTITIONS)
        data0 = end_offsets(bootstrap, topic, partitions)
        produce(bootstrap, topic, size * WRITE_TXNS, 100, partitions, size)
        state1 = end_offsets(bootstrap, TXN_STATE, TXN_STATE_PARTITIONS)
        data1 = end_offsets(bootstrap, topic, partitions)
        markers = data1 - data0 - size * WRITE_TXNS
        out.append((size, (state1 - state0) / WRITE_TXNS, markers / WRITE_TXNS))
    return out


def measure(bootstrap: str, pid: int, topic: str, args: argparse.Namespace, per_txn: int) -> Rate:
    create_topic(bootstrap, topic, args.partitions)
    cpu0 = cpu_seconds(pid)
    seconds = produce(bootstrap, topic, args.records, args.size, args.partitions, per_txn)
    cpu = cpu_seconds(pid) - cpu0
    return Rate(args.records / seconds, args.records * args.size / seconds / 1e6, cpu / args.records * 10_000)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=50_000, help="records per producer per run")
    parser.add_argument("--size", type=int, default=1024, help="bytes per record value")
    parser.add_argument("--per-txn", type=int, default=100, help="records per transaction")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=3)
    return parser.parse_args()


def _median(rates: list[Rate], field: str) -> float:
    return float(statistics.median(getattr(r, field) for r in rates))


def _row(name: str, rates: list[Rate], baseline: list[Rate] | None) -> str:
    ratio = 1.0 if baseline is None else _median(rates, "records_s") / _median(baseline, "records_s")
    return (f"| {name} | {_median(rates, 'records_s'):,.0f} | {_median(rates, 'mb_s'):.1f} | "
            f"{_median(rates, 'cpu_per_10k'):.2f} | {ratio:.2f} |")  # fmt: skip


def main() -> None:
    args = _arguments()
    plain: list[Rate] = []
    txn: list[Rate] = []
    writes: list[tuple[int, float, float]] = []
    for run in range(args.runs):
        with running(lambda port, data: kafkito_command(kafkito_executable(), port, data)) as (
            bootstrap,
            pid,
        ):
            order = [("plain", 0), ("txn", args.per_txn)]
            for name, per_txn in order if run % 2 == 0 else reversed(order):
                rate = measure(bootstrap, pid, f"{name}-{run}", args, per_txn)
                (plain if per_txn == 0 else txn).append(rate)
                print(
                    f"run {run + 1}: {name}: {rate.records_s:,.0f} records/s, {rate.mb_s:.1f} MB/s",
                    flush=True,
                )
            if run == args.runs - 1:
                writes = writes_per_commit(bootstrap, args.partitions)
    print()
    print(
        f"{args.records:,} records of {args.size} B, {args.partitions} partitions, median of {args.runs} runs"
    )
    print()
    print("| producer | records/s | MB/s | broker CPU s per 10k records | records/s vs idempotent |")
    print("|---|---|---|---|---|")
    print(_row("idempotent (acks=all)", plain, None))
    print(_row(f"transactional, {args.per_txn} records per transaction", txn, plain))
    print()
    print(
        f"Log writes per transaction ({WRITE_TXNS} transactions of each size, {args.partitions} partitions):"
    )
    print()
    print("| records per transaction | `__transaction_state` appends | markers (control batches) |")
    print("|---|---|---|")
    for size, state, markers in writes:
        print(f"| {size:,} | {state:.2f} | {markers:.2f} |")


if __name__ == "__main__":
    main()
