"""Building and decoding real record batches with kafka-python for the log tests."""

from __future__ import annotations

from dataclasses import dataclass

from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.partition_log import PartitionLog

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODECS = (NONE, GZIP, SNAPPY, LZ4, ZSTD)


@dataclass(frozen=True)
class Rec:
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple[tuple[str, bytes], ...] = ()


def records(n: int, *, start: int = 0, ts: int = 1_700_000_000_000, size: int = 10) -> list[Rec]:
    return [
        Rec(f"k{n}".encode(), (f"v{n}-".encode() * size)[:size], ts + n, (("h", b"x"),))
        for n in range(start, start + n)
    ]


def batch(
    recs: list[Rec] | int,
    *,
    compression: int = NONE,
    producer_id: int = -1,
    epoch: int = -1,
    sequence: int = -1,
    transactional: bool = False,
) -> bytes:
    """One magic-v2 batch exactly as a kafka-python producer would send it."""
    if isinstance(recs, int):
        recs = records(recs)
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=sequence,
        batch_size=1 << 30,
    )
    for i, r in enumerate(recs):
        builder.append(i, timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers))
    return bytes(builder.build())


def decode(data: bytes) -> list[tuple[int, Rec]]:
    """(offset, record) of every record in a buffer of batches, CRCs checked."""
    out = []
    mem = MemoryRecords(data)
    while mem.has_next():
        b = mem.next_batch()
        assert b.validate_crc()
        for r in b:
            out.append((r.offset, Rec(r.key, r.value, r.timestamp, tuple(r.headers))))
    return out


def read_all(plog: PartitionLog, start: int | None = None) -> list[tuple[int, Rec]]:
    """Every record from `start` (default: log start) to the end, fetching like a consumer."""
    offset = plog.log_start_offset if start is None else start
    out: list[tuple[int, Rec]] = []
    while offset < plog.log_end_offset:
        data = plog.read(offset, 4096)
        if not data:  # a gap up to the log end (offsets of damaged batches recovery dropped)
            assert plog.batch_headers(offset) == [], f"no data at {offset}"
            break
        got = [(o, r) for o, r in decode(data) if o >= offset]
        out.extend(got)
        offset = got[-1][0] + 1
    return out


def config(**kw: object) -> LogConfig:
    return LogConfig(**kw)  # type: ignore[arg-type]
