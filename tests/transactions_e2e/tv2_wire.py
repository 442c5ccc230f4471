"""A transactions V2 producer (KIP-890 part 2) speaking raw requests, as Kafka 4's Java producer does.

No installed client speaks V2: librdkafka (confluent-kafka), kafka-python 3.0.12, aiokafka and
KafkaJS all stop at EndTxn v3-v4 and Produce v11 or lower. This one sends what a V2 producer sends:
InitProducerId, Produce v12 with no AddPartitionsToTxn before it, TxnOffsetCommit v5 with no
AddOffsetsToTxn, and EndTxn v5, taking the producer id and epoch from EndTxn's answer and starting
every partition's sequence again at 0 when they change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.support.wire import WireClient

PRODUCE, TXN_OFFSET_COMMIT, INIT_PID, END_TXN = 0, 28, 22, 26
PRODUCE_V2, TXN_OFFSET_COMMIT_V2, END_TXN_V2 = 12, 5, 5


def txn_batch(pid: int, epoch: int, sequence: int, values: Sequence[bytes]) -> bytes:
    """One transactional record batch (magic v2) holding `values`."""
    builder = DefaultRecordBatchBuilder(2, 0, True, pid, epoch, sequence, 1 << 20)
    for i, value in enumerate(values):
        builder.append(i, timestamp=None, key=None, value=value, headers=[])
    return bytes(builder.build())


class Tv2Producer:
    """One transactional id over one connection; every call returns the error code it got."""

    def __init__(self, bootstrap: str, transactional_id: str, timeout_ms: int = 60_000) -> None:
        self.wire = WireClient(bootstrap, client_id="tv2-producer")
        self.transactional_id = transactional_id
        self.timeout_ms = timeout_ms
        self.producer_id = -1
        self.epoch = -1
        self.sequences: dict[tuple[str, int], int] = {}

    def close(self) -> None:
        self.wire.close()

    def reconnect(self, bootstrap: str) -> None:
        self.wire.close()
        self.wire = WireClient(bootstrap, client_id="tv2-producer")

    def init(self) -> int:
        r = self.wire.request(
            INIT_PID, 5, transactional_id=self.transactional_id, transaction_timeout_ms=self.timeout_ms,
            producer_id=self.producer_id, producer_epoch=self.epoch,
        )  # fmt: skip
        if r.error_code == 0:
            self._use(r.producer_id, r.producer_epoch)
        return int(r.error_code)

    def _use(self, producer_id: int, epoch: int) -> None:
        if (producer_id, epoch) != (self.producer_id, self.epoch):
            self.sequences.clear()
        self.producer_id, self.epoch = producer_id, epoch

    def send(self, topic: str, partition: int, values: Sequence[bytes]) -> int:
        """Produce v12 of one batch to one partition (acks=all)."""
        sequence = self.sequences.get((topic, partition), 0)
        records = txn_batch(self.producer_id, self.epoch, sequence, values)
        r = self.wire.request(
            PRODUCE, PRODUCE_V2, transactional_id=self.transactional_id, acks=-1, timeout_ms=5000,
            topic_data=[dict(name=topic, partition_data=[dict(index=partition, records=records)])],
        )  # fmt: skip
        error = int(r.responses[0].partition_responses[0].error_code)
        if error == 0:
            self.sequences[(topic, partition)] = sequence + len(values)
        return error

    def send_offsets(self, group: str, offsets: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        """TxnOffsetCommit v5 for `group` (no member: a standalone group); the error per partition."""
        topics: dict[str, list[dict[str, Any]]] = {}
        for (topic, partition), offset in offsets.items():
            entry = dict(
                partition_index=partition, committed_offset=offset, committed_leader_epoch=-1,
                committed_metadata="",
            )  # fmt: skip
            topics.setdefault(topic, []).append(entry)
        r = self.wire.request(
            TXN_OFFSET_COMMIT, TXN_OFFSET_COMMIT_V2, transactional_id=self.transactional_id, group_id=group,
            producer_id=self.producer_id, producer_epoch=self.epoch, generation_id_or_member_epoch=-1,
            member_id="", group_instance_id=None,
            topics=[dict(name=t, partitions=ps) for t, ps in topics.items()],
        )  # fmt: skip
        return {(t.name, p.partition_index): int(p.error_code) for t in r.topics for p in t.partitions}

    def end(self, commit: bool, epoch: int | None = None) -> Any:
        """EndTxn v5 (under `epoch`, default the current one); the raw response. On success the
        producer goes on with the id and epoch it names."""
        r = self.wire.request(
            END_TXN, END_TXN_V2, transactional_id=self.transactional_id, producer_id=self.producer_id,
            producer_epoch=self.epoch if epoch is None else epoch, committed=commit,
        )  # fmt: skip
        if r.error_code == 0:
            self._use(r.producer_id, r.producer_epoch)
        return r

    def commit(self) -> int:
        return int(self.end(True).error_code)

    def abort(self) -> int:
        return int(self.end(False).error_code)
