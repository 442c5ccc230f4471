"""SIGKILL of the broker (a `kafkito serve` process) in the middle of transactions, then a restart on
the same data: nothing acknowledged is lost, a read_committed reader never sees a record of an aborted
or unfinished transaction, and the open transaction ends (by the producer re-initialising, or by its
timeout) so that readers move on."""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.compat import reference as ref
from tests.support.admin import create_topic
from tests.support.brokers import ProcessBroker
from tests.support.records import Rec
from tests.support.waiting import DEADLINE_S, wait_until
from tests.transactions_e2e.logview import high_watermarks, plain_produce, settled, stable_offsets
from tests.transactions_e2e.producers import ConfluentTxn, make_producer, txn_id
from tests.transactions_e2e.readers import CLIENTS, append_sentinels, read, values_of

PARTITIONS = 2
FAST_ABORTS = dict(
    group_initial_rebalance_delay_ms=0, transaction_abort_timed_out_transaction_cleanup_interval_ms=200
)


def port_outside_ephemeral_range() -> int:
    """A free port below the kernel's ephemeral range: a port the OS hands out for a bind to port 0
    never lands on it, so no other test on the machine takes it while the broker is down between a
    SIGKILL and the restart."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for port in random.sample(range(20_000, low), 100):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free port in 20000-{low}")


@pytest.fixture
def crash_broker(tmp_path: Path) -> Iterator[Callable[..., ProcessBroker]]:
    """Start `kafkito serve` on a port that stays ours across restarts (Kafka properties as keyword
    arguments, dots written as underscores)."""
    started: list[ProcessBroker] = []

    def start(**props: Any) -> ProcessBroker:
        broker = ProcessBroker(
            tmp_path / "pdata", port=port_outside_ephemeral_range(),
            props={k.replace("_", "."): v for k, v in props.items()},
        )  # fmt: skip
        started.append(broker.start())
        return broker

    yield start
    for broker in started:
        broker.kill()


def kill_and_restart(broker: ProcessBroker, meanwhile: Callable[[], None] = lambda: None) -> None:
    """SIGKILL, run `meanwhile`, start again on the same data; check it is this broker that answers."""
    cluster_id = ref.cluster(broker.bootstrap)[0]
    broker.kill()
    meanwhile()
    broker.start()
    assert ref.cluster(broker.bootstrap)[0] == cluster_id, f"another broker answers on {broker.bootstrap}"


@contextmanager
def broker_log_on_failure(broker: ProcessBroker) -> Iterator[None]:
    """A failure shows the end of the broker's log (its restarts included)."""
    try:
        yield
    except AssertionError as exc:
        tail = "\n".join(broker.log_path.read_text(errors="replace").splitlines()[-60:])
        raise AssertionError(f"{exc}\n--- broker log {broker.log_path} ---\n{tail}") from exc


def recs(name: str, n: int) -> list[Rec]:
    return [Rec(i % PARTITIONS, None, f"{name}-{i}".encode()) for i in range(n)]


def crash_with_open_transaction(
    broker: ProcessBroker, topic: str, transactional_id: str, **conf: object
) -> tuple[list[Rec], list[Rec], list[Rec]]:
    """Commit one transaction, leave a second open with acknowledged records, append plain records
    after it, then SIGKILL and restart the broker. Returns (committed, open, plain)."""
    create_topic(broker.bootstrap, topic, PARTITIONS)
    producer = make_producer("confluent-kafka", broker.bootstrap, transactional_id, **conf)
    producer.init()
    producer.begin()
    committed = recs("committed", 8)
    producer.send(topic, committed)
    producer.commit()
    producer.begin()
    unfinished = recs("unfinished", 6)
    producer.send(topic, unfinished)
    plain = recs("plain", 4)
    plain_produce(broker.bootstrap, topic, plain)
    ends = high_watermarks(broker.bootstrap, topic, PARTITIONS)

    kill_and_restart(broker, producer.close)  # the old producer goes, its transaction still open
    after = high_watermarks(broker.bootstrap, topic, PARTITIONS)
    assert all(after[p] >= ends[p] for p in ends), f"acknowledged records lost: HW {ends} -> {after}"
    return committed, unfinished, plain


def test_sigkill_with_an_open_transaction_then_the_producer_reinitialises(
    crash_broker: Callable[..., ProcessBroker],
) -> None:
    broker = crash_broker(group_initial_rebalance_delay_ms=0)
    with broker_log_on_failure(broker):
        topic, shared_id = "crash-reinit", txn_id()
        committed, unfinished, plain = crash_with_open_transaction(broker, topic, shared_id)

        # Reloaded as open: the last stable offset waits at the unfinished transaction's first record.
        first_open = {p: sum(1 for r in committed if r.partition == p) + 1 for p in range(PARTITIONS)}
        assert stable_offsets(broker.bootstrap, topic, PARTITIONS) == first_open

        successor = make_producer("confluent-kafka", broker.bootstrap, shared_id)
        try:
            successor.init()  # aborts the transaction left open before the crash
            assert settled(broker.bootstrap, topic, PARTITIONS)
            successor.begin()
            later = recs("later", 6)
            successor.send(topic, later)
            successor.commit()
        finally:
            successor.close()

        append_sentinels(broker.bootstrap, topic, PARTITIONS, "end")
        wrong = []
        for client in CLIENTS:
            got = read(client, broker.bootstrap, topic, PARTITIONS, "read_committed", "end").values()
            if got != values_of(committed + plain + later, PARTITIONS):
                wrong.append(f"{client}: {got}")
        assert not wrong, "read_committed after the crash:\n  " + "\n  ".join(wrong)
        everything = read("confluent-kafka", broker.bootstrap, topic, PARTITIONS, "read_uncommitted", "end")
        assert everything.values() == values_of(committed + unfinished + plain + later, PARTITIONS)


def test_sigkill_with_an_open_transaction_then_it_times_out_after_the_restart(
    crash_broker: Callable[..., ProcessBroker],
) -> None:
    broker = crash_broker(**FAST_ABORTS)
    with broker_log_on_failure(broker):
        topic = "crash-timeout"
        committed, unfinished, plain = crash_with_open_transaction(
            broker, topic, txn_id(), **{"transaction.timeout.ms": 3000}
        )
        wait_until(
            lambda: settled(broker.bootstrap, topic, PARTITIONS),
            DEADLINE_S,
            "the reloaded transaction to time out",
            detail=lambda: f"LSO {stable_offsets(broker.bootstrap, topic, PARTITIONS)}",
        )
        append_sentinels(broker.bootstrap, topic, PARTITIONS, "end")
        got = read("kafka-python", broker.bootstrap, topic, PARTITIONS, "read_committed", "end").values()
        assert got == values_of(committed + plain, PARTITIONS)
        got = read("aiokafka", broker.bootstrap, topic, PARTITIONS, "read_uncommitted", "end").values()
        assert got == values_of(committed + unfinished + plain, PARTITIONS)


def test_sigkill_during_a_stream_of_transactions_keeps_each_all_or_nothing(
    crash_broker: Callable[..., ProcessBroker],
) -> None:
    """A producer commits transactions of 5 records in a loop while the broker is killed: after the
    restart every transaction whose commit returned is visible whole, and any other one is visible
    whole or not at all."""
    broker = crash_broker(**FAST_ABORTS)
    with broker_log_on_failure(broker):
        topic, shared_id = "crash-stream", txn_id()
        create_topic(broker.bootstrap, topic, PARTITIONS)
        committed: list[int] = []
        stop = threading.Event()
        loop_error: list[BaseException] = []

        def produce_transactions() -> None:
            producer = ConfluentTxn(broker.bootstrap, shared_id, {"transaction.timeout.ms": 10_000})
            try:
                producer.init()
                n = 0
                while not stop.is_set():
                    producer.producer.begin_transaction()
                    for j in range(5):
                        producer.producer.produce(topic, value=f"t{n}-{j}".encode(), partition=j % PARTITIONS)
                    producer.producer.commit_transaction(10)  # bounded: the broker may be gone
                    committed.append(n)
                    n += 1
            except BaseException as exc:  # the broker died under it: the expected way out
                loop_error.append(exc)
            finally:
                producer.close()

        thread = threading.Thread(target=produce_transactions, name="txn-stream", daemon=True)
        thread.start()
        wait_until(lambda: len(committed) >= 20 or loop_error, DEADLINE_S, "20 transactions committed")
        assert not loop_error, f"the transaction loop failed before the crash: {loop_error}"
        kill_and_restart(broker, stop.set)  # the loop's last commit may fail, or complete after the restart
        wait_until(lambda: not thread.is_alive(), DEADLINE_S, "the transaction loop to end")
        done = list(committed)
        stored = sum(high_watermarks(broker.bootstrap, topic, PARTITIONS).values())
        assert stored >= 5 * len(done), f"{len(done)} transactions committed, {stored} offsets stored"

        successor = make_producer("confluent-kafka", broker.bootstrap, shared_id)
        try:
            successor.init()  # ends whatever the crash left open
        finally:
            successor.close()
        append_sentinels(broker.bootstrap, topic, PARTITIONS, "end")
        for client in CLIENTS:
            seen = read(client, broker.bootstrap, topic, PARTITIONS, "read_committed", "end")
            counts: dict[int, int] = {}
            for gots in seen.by_partition.values():
                for g in gots:
                    n = int((g.value or b"").split(b"-")[0][1:])
                    counts[n] = counts.get(n, 0) + 1
            missing = [n for n in done if counts.get(n) != 5]
            partial = {n: c for n, c in counts.items() if c != 5}
            assert not missing and not partial, (
                f"{client}: committed but not whole {missing}, partial {partial}"
            )
            assert max(counts) <= max(done) + 1, f"{client}: transactions never begun are visible"
