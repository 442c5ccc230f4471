"""Transactions: each client's transactional producer commits, aborts, and sends a group's offsets."""

from __future__ import annotations

from tests.compat import reference as ref
from tests.compat.clients.base import DEADLINE_S, Driver, TxnStep
from tests.compat.harness import run_for_clients
from tests.compat.matrix import Matrix
from tests.compat.naming import group_for, slug, topic_for
from tests.compat.records import assert_same_records, sample_records
from tests.support.brokers import ProcessBroker
from tests.support.waiting import wait_until

PARTITIONS = 3


def test_transactions(matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic, group = topic_for("transactions", d), group_for("transactions", d)
        ref.create_topic(bootstrap, topic, PARTITIONS)
        recs = sample_records(45, PARTITIONS, d.style, seed=13)
        first, aborted, last = recs[:15], recs[15:30], recs[30:]
        steps = [
            TxnStep(first, commit=True, group=group, offsets={0: 5, 1: 7}),
            TxnStep(aborted, commit=False, group=group, offsets={0: 9, 2: 3}),
            TxnStep(last, commit=True),
        ]
        d.transact(bootstrap, topic, f"txn-{slug(d)}", steps)

        # The markers may follow EndTxn's answer (as in Kafka): wait until nothing is open.
        def settled() -> bool:
            return ref.latest_offsets(bootstrap, topic, PARTITIONS, 1) == ref.end_offsets(
                bootstrap, topic, PARTITIONS
            )

        wait_until(settled, DEADLINE_S, "the last transaction's markers")
        ends = ref.end_offsets(bootstrap, topic, PARTITIONS)
        per_partition = {p: sum(1 for r in recs if r.partition == p) for p in range(PARTITIONS)}
        assert ends == {p: n + 3 for p, n in per_partition.items()}, f"high watermarks {ends}"
        assert_same_records(first + last, ref.read_log(bootstrap, topic, PARTITIONS, 1))
        assert_same_records(recs, ref.read_log(bootstrap, topic, PARTITIONS, 0))
        wait_until(
            lambda: ref.committed(bootstrap, group, topic, PARTITIONS) == {0: 5, 1: 7, 2: -1},
            DEADLINE_S, "the first transaction's offsets committed",
            detail=lambda: f"committed {ref.committed(bootstrap, group, topic, PARTITIONS)}",
        )  # fmt: skip
        return None

    run_for_clients(matrix, "transactions", drivers, body)
