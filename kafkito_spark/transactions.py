"""The exactly-once sink's transactions: opened and filled by tasks, ended by the driver.

A task of micro-batch B writing Spark partition P uses the transactional id `{prefix}-{B}-{P}`.
Starting its producer (InitProducerId) fences any earlier attempt of the same task and aborts
what that attempt left open. The task flushes its records but does not commit: it hands the
producer id and epoch to the driver in its commit message, and the driver ends every task's
transaction with EndTxn once Spark commits the batch (or aborts them when Spark aborts it), as
Flink's KafkaSink recovers its transactions.

Each transaction also commits, as a transactional offset commit, a batch marker: the offset B+1
of partition 0 of the marker topic in the group `{prefix}-{P}`. It becomes visible with the
records, atomically. A batch that Spark runs again after a driver restart (its sink commit done,
its own commit log entry not yet written) finds the marker of each partition it already
committed and writes nothing for it.

confluent-kafka does not expose a producer's id and epoch, so this side uses kafka-python's
transactional producer (which ends transactions with EndTxn v3, the pre-KIP-890 protocol) and
kafka-python's admin client for the driver's requests.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka import errors as kafka_errors
from kafka.protocol.metadata.find_coordinator import CoordinatorType
from kafka.protocol.producer.transaction import EndTxnRequest
from kafka.structs import OffsetAndMetadata
from pyspark.sql.datasource import WriterCommitMessage

from kafkito_spark.errors import KafkaOptionError
from kafkito_spark.rows import Row

log = structlog.get_logger(__name__)

# librdkafka's names (the `kafka.` options) that kafka-python spells differently.
_RENAMED = {"sasl.username": "sasl_plain_username", "sasl.password": "sasl_plain_password"}
# Set by this module: the producer is transactional, hence idempotent with acks=all.
_MANAGED = frozenset({"transactional.id", "enable.idempotence", "acks"})
# Spark's local properties that name the query and the micro-batch a task belongs to.
BATCH_ID_PROPERTY = "streaming.sql.batchId"
END_TXN_VERSION = 3  # what kafka-python's own producer sends: the transaction is a pre-KIP-890 one
_ATTEMPTS = 100
_BACKOFF_S = 0.1
_COORDINATOR_NOT_READY = (
    kafka_errors.NotCoordinatorError,
    kafka_errors.CoordinatorNotAvailableError,
    kafka_errors.CoordinatorLoadInProgressError,
)


@dataclass
class TransactionToEnd(WriterCommitMessage):
    """What one task left for the driver: its open transaction, or that the batch was already in."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    records: int
    already_committed: bool = False


def kafka_python_config(client: Mapping[str, str]) -> dict[str, Any]:
    """The `kafka.` options as kafka-python producer settings; an option it lacks is refused."""
    known = KafkaProducer.DEFAULT_CONFIG
    config: dict[str, Any] = {}
    for name, value in client.items():
        if name in _MANAGED:
            raise KafkaOptionError(f"kafka option '{name}' is set by the exactly-once sink itself")
        key = _RENAMED.get(name, name.replace(".", "_"))
        if key not in known:
            raise KafkaOptionError(f"kafka option '{name}' is not supported by the exactly-once sink")
        default = known[key]
        if isinstance(default, bool):
            config[key] = value.strip().lower() == "true"
        elif isinstance(default, int):
            config[key] = int(value)
        else:
            config[key] = value
    return config


def transactional_id(prefix: str, batch: int | str, partition: int) -> str:
    return f"{prefix}-{batch}-{partition}"


@dataclass(frozen=True, slots=True)
class BatchMarker:
    """Where a streaming task records that its micro-batch is in: the group `{prefix}-{P}`'s
    offset of partition 0 of the marker topic, set to the batch id plus one."""

    group: str
    partition: TopicPartition
    batch_id: int

    @classmethod
    def of(cls, prefix: str, topic: str, batch_id: int, spark_partition: int) -> BatchMarker:
        return cls(f"{prefix}-{spark_partition}", TopicPartition(topic, 0), batch_id)


def _admin(config: Mapping[str, Any]) -> KafkaAdminClient:
    return KafkaAdminClient(**{k: v for k, v in config.items() if k in KafkaAdminClient.DEFAULT_CONFIG})


def _committed_batches(config: Mapping[str, Any], marker: BatchMarker) -> int:
    """How many batches this Spark partition has committed: the marker's offset, 0 if none."""
    for _attempt in range(_ATTEMPTS):
        admin = _admin(config)  # a fresh one: kafka-python keeps a coordinator that moved
        try:
            found = admin.list_group_offsets({marker.group: [marker.partition]}).get(marker.group, {})
            committed = found.get(marker.partition)
            return max(committed.offset, 0) if committed is not None else 0
        except _COORDINATOR_NOT_READY:
            # Kafka's answers while __consumer_offsets is created or loaded: ask again shortly.
            time.sleep(_BACKOFF_S)
        finally:
            admin.close()
    raise kafka_errors.KafkaTimeoutError(f"the coordinator of {marker.group} stayed unavailable")


def write_in_transaction(
    client: Mapping[str, str],
    txn_id: str,
    rows: Iterable[Row],
    marker: BatchMarker | None,
) -> TransactionToEnd:
    """Produce a task's rows in its own transaction and leave it open for the driver.

    With a marker (streaming), a batch the marker says is in already is not written again.
    """
    config = kafka_python_config(client)
    producer = KafkaProducer(**config, transactional_id=txn_id)
    try:
        producer.init_transactions()  # fences and aborts an earlier attempt of this task
        pid_epoch = producer._transaction_manager.producer_id_and_epoch
        if marker is not None and _committed_batches(config, marker) > marker.batch_id:
            log.info("batch already committed", transactional_id=txn_id, batch=marker.batch_id)
            return TransactionToEnd(txn_id, pid_epoch.producer_id, pid_epoch.epoch, 0, True)
        producer.begin_transaction()
        failures: list[BaseException] = []
        sent = 0
        for row in rows:
            future = producer.send(
                row.topic, value=row.value, key=row.key, partition=row.partition, headers=row.headers
            )
            future.add_errback(failures.append)
            sent += 1
        if marker is not None:
            producer.send_offsets_to_transaction(
                {marker.partition: OffsetAndMetadata(marker.batch_id + 1, f"batch {marker.batch_id}", -1)},
                marker.group,
            )
        producer.flush()
        if failures:
            raise failures[0]
        # The transaction stays open: closing a producer neither commits nor aborts it.
        return TransactionToEnd(txn_id, pid_epoch.producer_id, pid_epoch.epoch, sent)
    finally:
        producer.close()


def end_transactions(
    client: Mapping[str, str], messages: Sequence[WriterCommitMessage | None], commit: bool
) -> None:
    """EndTxn for every task's open transaction, each sent to its transaction coordinator."""
    open_txns = [m for m in messages if isinstance(m, TransactionToEnd) and not m.already_committed]
    if not open_txns:
        return
    config = kafka_python_config(client)
    admin = _admin(config)
    try:
        for txn in open_txns:
            _end_one(admin, txn, commit)
    finally:
        admin.close()


def _end_one(admin: KafkaAdminClient, txn: TransactionToEnd, commit: bool) -> None:
    """EndTxn to the transactional id's coordinator, found again after NOT_COORDINATOR."""
    cache = admin._manager.cluster._coordinators
    cache_key = (CoordinatorType.TRANSACTION, txn.transactional_id)

    async def send() -> None:
        for _attempt in range(_ATTEMPTS):
            node = await admin._find_coordinator_id(txn.transactional_id, CoordinatorType.TRANSACTION)
            request = EndTxnRequest(
                transactional_id=txn.transactional_id,
                producer_id=txn.producer_id,
                producer_epoch=txn.producer_epoch,
                committed=commit,
                version=END_TXN_VERSION,
            )
            response = await admin._manager.send(request, node_id=node)
            error = kafka_errors.for_code(response.error_code)
            if error is kafka_errors.NoError:
                return
            if error in (kafka_errors.NotCoordinatorError, kafka_errors.CoordinatorNotAvailableError):
                cache.pop(cache_key, None)
            elif error not in (
                kafka_errors.ConcurrentTransactionsError,
                kafka_errors.CoordinatorLoadInProgressError,
            ):
                raise error(f"EndTxn(committed={commit}) of {txn.transactional_id}")
            await admin._net.sleep(_BACKOFF_S)
        raise kafka_errors.KafkaTimeoutError(f"EndTxn of {txn.transactional_id} kept being retried")

    admin._manager.run(send)
    log.info("transaction ended", transactional_id=txn.transactional_id, committed=commit)
