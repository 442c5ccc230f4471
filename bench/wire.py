"""Wire primitives: kafkito.protocol.primitives against kafka-python's own helpers, in one run.

Run: .venv/bin/python bench/wire.py [--repeat 7] [--number 200000]

Each row times one operation both ways with timeit (best of `--repeat` runs of `--number` calls,
interleaved so machine noise hits both alike) and prints ns per call and the ratio
kafka-python / kafkito (above 1: the hand-written one is faster). The last rows are the import
cost each side adds to a broker start (fresh interpreters, median of `--imports` runs).
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable

from kafkito.protocol import primitives as p

Case = tuple[str, Callable[[], object], Callable[[], object]]


def _kafka_python_cases() -> list[Case]:
    from kafka.protocol.schemas.fields.codecs.types import String, UnsignedVarInt32
    from kafka.record.util import calc_crc32c, decode_varint, encode_varint

    def kp_varint(value: int) -> bytes:
        out = bytearray()
        encode_varint(value, out.append)
        return bytes(out)

    one, three = p.varint(-3), p.varint(300_000)
    uone, uthree = p.uvarint(42), p.uvarint(300_000)
    short = p.compact_string("consumer-group-1")
    long_ = p.compact_string("consumer-1-" + "x" * 200)
    compact = String("utf-8")
    batch = bytes(range(256)) * 4
    return [
        ("signed varint decode, 1 byte", lambda: p.read_varint(one, 0), lambda: decode_varint(one, 0)),
        ("signed varint decode, 3 bytes", lambda: p.read_varint(three, 0), lambda: decode_varint(three, 0)),
        ("signed varint encode, 1 byte", lambda: p.varint(-3), lambda: kp_varint(-3)),
        ("signed varint encode, 3 bytes", lambda: p.varint(300_000), lambda: kp_varint(300_000)),
        (
            "unsigned varint decode, 1 byte",
            lambda: p.read_uvarint(uone, 0),
            lambda: UnsignedVarInt32.decode(io.BytesIO(uone)),
        ),
        (
            "unsigned varint decode, 3 bytes",
            lambda: p.read_uvarint(uthree, 0),
            lambda: UnsignedVarInt32.decode(io.BytesIO(uthree)),
        ),
        ("unsigned varint encode, 1 byte", lambda: p.uvarint(42), lambda: UnsignedVarInt32.encode(42)),
        (
            "unsigned varint encode, 3 bytes",
            lambda: p.uvarint(300_000),
            lambda: UnsignedVarInt32.encode(300_000),
        ),
        (
            "compact string decode, 16 chars",
            lambda: p.read_compact_string(short, 0),
            lambda: compact.decode(io.BytesIO(short), compact=True),
        ),
        (
            "compact string decode, 211 chars",
            lambda: p.read_compact_string(long_, 0),
            lambda: compact.decode(io.BytesIO(long_), compact=True),
        ),
        (
            "compact string encode, 16 chars",
            lambda: p.compact_string("consumer-group-1"),
            lambda: compact.encode("consumer-group-1", compact=True),
        ),
        ("CRC-32C of 1 KiB", lambda: p.crc32c(batch), lambda: calc_crc32c(batch)),
    ]


def _best_ns(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=1)) / number * 1e9


def _import_ms(module: str, runs: int) -> float:
    """Median ms to import `module` in a fresh interpreter (kafka's client __init__ deferred, as in serve)."""
    code = (
        "import time, kafkito.protocol.kafka_python\n"
        f"t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    )
    times = [
        float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
        for _ in range(runs)
    ]
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--imports", type=int, default=5)
    args = parser.parse_args()
    cases = _kafka_python_cases()
    print("| operation | kafkito (ns) | kafka-python (ns) | kafka-python / kafkito |")
    print("|---|---|---|---|")
    for name, ours, theirs in cases:
        assert ours() == theirs() or name.startswith(("unsigned varint decode", "compact string decode"))
        best_ours = best_theirs = float("inf")
        for _ in range(args.repeat):  # interleaved
            best_ours = min(best_ours, _best_ns(ours, args.number))
            best_theirs = min(best_theirs, _best_ns(theirs, args.number))
        print(f"| {name} | {best_ours:.0f} | {best_theirs:.0f} | {best_theirs / best_ours:.2f}x |")
    t0 = time.perf_counter()
    ours_ms = _import_ms("kafkito.protocol.primitives", args.imports)
    theirs_ms = _import_ms("kafka.record.util", args.imports)
    print(f"| import at start-up (ms) | {ours_ms:.1f} | {theirs_ms:.1f} | {theirs_ms / ours_ms:.1f}x |")
    print(f"\n({time.perf_counter() - t0:.1f} s for the import rows)", file=sys.stderr)


if __name__ == "__main__":
    main()
