"""The records a scenario sends (in the shapes each client can express) and how what came back is judged."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tests.support.records import Got, Header, Rec

# Got and Rec are the shared shapes of tests/support/records.py, re-exported for the drivers.
__all__ = [
    "Got", "Header", "Rec", "RecordStyle", "assert_exactly_once", "assert_same_records", "by_partition",
    "now_ms", "numbered", "partition_headers", "sample_records",
]  # fmt: skip

_WORDS = [b"kafka ", b"kafkito ", b"record ", b"broker ", b"partition ", b"offset "]


@dataclass(frozen=True, slots=True)
class RecordStyle:
    """What a client can put in a record through its ordinary interface."""

    binary: bool = True  # arbitrary bytes in keys, values and header values
    per_record_headers: bool = True  # False: one header set per produce call (kcat -H)
    explicit_timestamps: bool = True  # False: the client stamps CreateTime itself
    null_keys: bool = True
    null_values: bool = True
    interleaved_headers: bool = True  # False: headers come grouped by name (an object of name -> values)


def sample_records(n: int, partitions: int, style: RecordStyle, *, seed: int = 7) -> list[Rec]:
    """`n` records round-robin over `partitions`: keys (null and empty ones where the style allows),
    compressible values of mixed sizes, 0-3 headers with repeated names, out-of-order timestamps."""
    rng = random.Random(seed)
    base = int(time.time() * 1000) - 3_600_000
    out = []
    for i in range(n):
        partition = i % partitions
        key: bytes | None = b"key-%d" % i
        if style.binary:
            key = b"key-%d-" % i + rng.randbytes(rng.randrange(0, 6))
        if style.null_keys and i % 11 == 5:
            key = None
        elif i % 13 == 7:
            key = b""
        size = rng.choice((0, 10, 100, 1000, 3000))
        body = b"".join(rng.choices(_WORDS, k=size // 7))
        value: bytes | None = (rng.randbytes(size // 20) if style.binary else b"value-%d " % i) + body
        if style.null_values and key is not None and i % 17 == 3:
            value = None
        if style.per_record_headers:
            names = [f"h{j % 2}" for j in range(i % 4)]
            if not style.interleaved_headers:
                names.sort()
            headers = tuple(
                (name, rng.randbytes(rng.randrange(0, 9)) if style.binary else b"v%d" % j)
                for j, name in enumerate(names)
            )
        else:
            headers = partition_headers(partition)
        timestamp = base + i * 10 + rng.randrange(-50, 50) if style.explicit_timestamps else None
        out.append(Rec(partition, key, value, headers, timestamp))
    return out


def partition_headers(partition: int) -> tuple[Header, ...]:
    """The header set of every record of a partition, for clients that set headers per call."""
    return (("source", b"compat"), ("partition", b"%d" % partition))


def numbered(prefix: str, n: int, partitions: int, start: int = 0) -> list[Rec]:
    """Small records whose values are unique names, for counting who consumed what."""
    return [Rec(i % partitions, b"k%d" % i, f"{prefix}-{i}".encode()) for i in range(start, start + n)]


def by_partition(items: Iterable[Rec | Got]) -> dict[int, list[Rec | Got]]:
    out: dict[int, list[Rec | Got]] = {}
    for r in items:
        out.setdefault(r.partition, []).append(r)
    return out


def assert_same_records(
    sent: Sequence[Rec], got: Sequence[Got], *, stamped_between: tuple[int, int] | None = None
) -> None:
    """`got` holds exactly `sent`, in order within each partition, byte for byte. Records the client
    stamped itself must carry a CreateTime inside `stamped_between` (ms)."""
    want, have = by_partition(sent), by_partition(got)
    assert sorted(have) == sorted(want), f"partitions: sent to {sorted(want)}, got from {sorted(have)}"
    for p, recs in want.items():
        gots = have[p]
        assert len(gots) == len(recs), f"partition {p}: sent {len(recs)} records, got {len(gots)}"
        offsets = [g.offset for g in gots]  # type: ignore[union-attr]
        assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets), f"p{p} offsets {offsets}"
        for i, (r, g) in enumerate(zip(recs, gots, strict=True)):
            where = f"partition {p} record {i}"
            assert g.key == r.key, f"{where}: key {g.key!r} != {r.key!r}"
            assert g.value == r.value, f"{where}: value {g.value!r:.80} != {r.value!r:.80}"
            assert tuple(g.headers) == r.headers, f"{where}: headers {g.headers!r} != {r.headers!r}"
            if r.timestamp is not None:
                assert g.timestamp == r.timestamp, f"{where}: timestamp {g.timestamp} != {r.timestamp}"
            elif stamped_between is not None:
                lo, hi = stamped_between
                assert g.timestamp is not None and lo <= g.timestamp <= hi, f"{where}: stamp {g.timestamp}"


def assert_exactly_once(sent: Iterable[Rec], got: Iterable[Got | bytes | None]) -> None:
    """Every sent value was consumed once: none lost, none twice (values must be unique)."""
    want = Counter(r.value for r in sent)
    have = Counter(g.value if isinstance(g, Got) else g for g in got)
    missing = sorted(v for v in want if have[v] == 0)  # type: ignore[type-var]
    twice = sorted(v for v, c in have.items() if c > 1)  # type: ignore[type-var]
    extra = sorted(v for v in have if v not in want)  # type: ignore[type-var]
    assert not (missing or twice or extra), (
        f"{len(missing)} lost {missing[:10]}, {len(twice)} consumed twice {twice[:10]}, "
        f"{len(extra)} unexpected {extra[:10]} (of {sum(want.values())} sent)"
    )


def now_ms() -> int:
    return int(time.time() * 1000)
