"""Transactional producers of confluent-kafka and kafka-python behind one small interface, each call
bounded (a client that never answers fails the test instead of hanging it)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from tests.support.produce import send_confluent, send_kafka_python
from tests.support.records import Rec
from tests.support.waiting import DEADLINE_S
from tests.transactions_e2e.bounded import bounded

PRODUCERS = ("confluent-kafka", "kafka-python")


class TxnProducer(Protocol):
    name: str

    def init(self) -> None: ...
    def begin(self) -> None: ...
    def send(self, topic: str, recs: Sequence[Rec]) -> None:
        """Send and wait until every record is acknowledged (the transaction stays open)."""

    def send_offsets(self, offsets: Mapping[tuple[str, int], int], group_metadata: Any) -> None:
        """Add the group's offsets ((topic, partition) -> next offset) to the transaction."""

    def commit(self) -> None: ...
    def abort(self) -> None: ...
    def close(self) -> None: ...


def txn_id() -> str:
    return f"txn-{uuid.uuid4().hex[:12]}"


def make_producer(client: str, bootstrap: str, transactional_id: str, **conf: Any) -> TxnProducer:
    """A transactional producer of `client`; `conf` is in that client's own spelling."""
    if client == "confluent-kafka":
        return ConfluentTxn(bootstrap, transactional_id, conf)
    if client == "kafka-python":
        return KafkaPythonTxn(bootstrap, transactional_id, conf)
    raise AssertionError(f"unknown producer client {client}")


class ConfluentTxn:
    name = "confluent-kafka"

    def __init__(self, bootstrap: str, transactional_id: str, conf: Mapping[str, Any]) -> None:
        from confluent_kafka import Producer

        self.errors: list[str] = []
        self.producer: Any = Producer({
            "bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 5,
            "reconnect.backoff.max.ms": 1000, "error_cb": lambda e: self.errors.append(str(e)), **conf,
        })  # fmt: skip

    def init(self) -> None:
        self.producer.init_transactions(DEADLINE_S)

    def begin(self) -> None:
        self.producer.begin_transaction()

    def send(self, topic: str, recs: Sequence[Rec]) -> None:
        send_confluent(self.producer, topic, recs, DEADLINE_S)

    def send_offsets(self, offsets: Mapping[tuple[str, int], int], group_metadata: Any) -> None:
        from confluent_kafka import TopicPartition

        tps = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
        self.producer.send_offsets_to_transaction(tps, group_metadata, DEADLINE_S)

    def commit(self) -> None:
        self.producer.commit_transaction(DEADLINE_S)

    def abort(self) -> None:
        self.producer.abort_transaction(DEADLINE_S)

    def close(self) -> None:
        from confluent_kafka import KafkaException

        try:
            self.producer.purge()
            self.producer.flush(0)
        except KafkaException:
            pass  # a producer in a fatal state (fenced) refuses to purge: nothing is left to send
        self.producer = None  # the last reference: librdkafka's instance and its threads go now


class KafkaPythonTxn:
    name = "kafka-python"

    def __init__(self, bootstrap: str, transactional_id: str, conf: Mapping[str, Any]) -> None:
        from kafka import KafkaProducer

        self.producer = bounded(
            lambda: KafkaProducer(
                bootstrap_servers=bootstrap, transactional_id=transactional_id, linger_ms=5,
                max_block_ms=int(DEADLINE_S * 1000), request_timeout_ms=30_000,
                reconnect_backoff_max_ms=1000, **conf,
            ),
            "creating kafka-python's transactional producer",
        )  # fmt: skip

    def init(self) -> None:
        bounded(self.producer.init_transactions, "kafka-python init_transactions")

    def begin(self) -> None:
        self.producer.begin_transaction()

    def send(self, topic: str, recs: Sequence[Rec]) -> None:
        bounded(lambda: send_kafka_python(self.producer, topic, recs), "kafka-python sends in a transaction")

    def send_offsets(self, offsets: Mapping[tuple[str, int], int], group_metadata: Any) -> None:
        from kafka import OffsetAndMetadata, TopicPartition

        oam = {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}
        bounded(
            lambda: self.producer.send_offsets_to_transaction(oam, group_metadata),
            "kafka-python send_offsets_to_transaction",
        )

    def commit(self) -> None:
        bounded(self.producer.commit_transaction, "kafka-python commit_transaction")

    def abort(self) -> None:
        bounded(self.producer.abort_transaction, "kafka-python abort_transaction")

    def close(self) -> None:
        bounded(lambda: self.producer.close(timeout=5), "closing kafka-python's producer")
