"""`kafkito transactions abort` and Kafka 4.4's `kafka-transactions.sh abort` end a hanging transaction on
one partition of a kafkito broker: the producer is found by the transaction's start offset
(DescribeProducers), the abort marker is written by the partition's leader (WriteTxnMarkers), and the
last stable offset moves past the transaction, so read_committed consumers go on."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from itertools import count

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from tests.cli.conftest import Cli
from tests.support.kafka_reference import ReferenceUnavailable, classpath, java

TRANSACTIONS_COMMAND = "org.apache.kafka.tools.TransactionsCommand"
_names = count()


class Hanging:
    """A transaction left open on partition 0 of a fresh topic: two records, no commit, no abort."""

    def __init__(self, cli: Cli) -> None:
        self.topic = f"hanging-{next(_names)}"
        cli.ok("topics", "create", self.topic)
        self.bootstrap = cli.bootstrap
        self.producer = KafkaProducer(bootstrap_servers=cli.bootstrap, transactional_id=f"{self.topic}-txn")
        self.producer.init_transactions()
        self.producer.begin_transaction()
        for value in (b"one", b"two"):
            self.producer.send(self.topic, value, partition=0).get(10)

    def stable_offset(self) -> int:
        """Partition 0's last stable offset: where a read_committed consumer's end is."""
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, isolation_level="read_committed")
        try:
            tp = TopicPartition(self.topic, 0)
            return int(consumer.end_offsets([tp])[tp])
        finally:
            consumer.close()

    def close(self) -> None:
        self.producer.close(timeout=1)


@pytest.fixture
def hanging(cli: Cli) -> Iterator[Hanging]:
    txn = Hanging(cli)
    yield txn
    txn.close()


def test_abort_by_start_offset_ends_the_transaction(cli: Cli, hanging: Hanging) -> None:
    assert hanging.stable_offset() == 0
    out = cli.ok("transactions", "abort", "--topic", hanging.topic, "--partition", "0", "--start-offset", "0")
    assert out.startswith("Aborted the transaction of producer ") and out.endswith(
        f" on {hanging.topic}-0.\n"
    )
    assert hanging.stable_offset() == 3  # the two records and the abort marker

    again = cli("transactions", "abort", "--topic", hanging.topic, "--partition", "0", "--start-offset", "0")
    assert again.returncode == 1 and again.stderr == (
        f"kafkito transactions abort: no open transaction on {hanging.topic}-0 starts at offset 0: "
        "`kafkito transactions describe ID` names an open transaction's partitions\n"
    )


def test_abort_by_producer_needs_its_epochs_and_refuses_an_old_one(cli: Cli, hanging: Hanging) -> None:
    admin = KafkaAdminClient(bootstrap_servers=cli.bootstrap)
    tp = TopicPartition(hanging.topic, 0)
    [state] = admin.describe_producers([tp])[tp].active_producers
    admin.close()
    producer_id, epoch = state.producer_id, state.producer_epoch
    where = ("--topic", hanging.topic, "--partition", "0", "--producer-id", str(producer_id))
    usage = cli("transactions", "abort", *where, "--producer-epoch", str(epoch))
    assert usage.returncode == 2 and usage.stderr == (
        "kafkito transactions abort: --producer-id needs --producer-epoch and --coordinator-epoch\n"
    )
    newer = str(epoch + 1)  # a marker may carry a newer epoch than the producer's (it fences it)
    cli.ok("transactions", "abort", *where, "--producer-epoch", newer, "--coordinator-epoch", "-1")
    assert hanging.stable_offset() == 3
    older = cli("transactions", "abort", *where, "--producer-epoch", str(epoch), "--coordinator-epoch", "0")
    assert older.returncode == 1 and older.stderr.count("\n") == 1, older.stderr
    assert older.stderr.startswith("kafkito transactions abort: InvalidProducerEpoch"), older.stderr


def test_kafka_transactions_sh_aborts_on_kafkito(cli: Cli, hanging: Hanging) -> None:
    try:
        command = [java(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", classpath(), TRANSACTIONS_COMMAND,
                   "--bootstrap-server", cli.bootstrap, "abort", "--topic", hanging.topic, "--partition", "0",
                   "--start-offset", "0"]  # fmt: skip
    except ReferenceUnavailable as exc:
        pytest.fail(f"Kafka 4.4's tools are needed (make install-clients): {exc}")
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert hanging.stable_offset() == 3

    consumer = KafkaConsumer(
        bootstrap_servers=cli.bootstrap, isolation_level="read_committed", auto_offset_reset="earliest"
    )
    consumer.assign([TopicPartition(hanging.topic, 0)])
    assert consumer.poll(2_000) == {}  # the aborted records are not read
    consumer.close()
