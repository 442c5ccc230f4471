"""Record batches (magic v2) for scenarios: fixed timestamps, so both brokers store the same bytes."""

from __future__ import annotations

from collections.abc import Sequence

from kafka.record.default_records import DefaultRecordBatchBuilder

BASE_TS = 1_700_000_000_000


def batch(
    values: Sequence[bytes],
    *,
    ts: int = BASE_TS,
    producer_id: int = -1,
    epoch: int = -1,
    sequence: int = -1,
    transactional: bool = False,
) -> bytes:
    """One batch of `values`, record i stamped `ts + i` ms."""
    builder = DefaultRecordBatchBuilder(2, 0, transactional, producer_id, epoch, sequence, 1 << 20)
    for i, value in enumerate(values):
        builder.append(i, timestamp=ts + i, key=None, value=value, headers=[])
    return bytes(builder.build())
