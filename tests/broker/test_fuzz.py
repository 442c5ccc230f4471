"""Mutated genuine requests of every API and version: no traceback, the broker stays up and answers.

A seeded mutation loop (the same frames on every run): each API and version the broker supports gets a
plausible request built with kafka-python's classes (tests/protocol/samples.py), sent as is and then
mutated a fixed number of times (bytes flipped, lengths set to -1 or huge, cut, bytes inserted, runs
zeroed or repeated); a fixed number of odd but well-formed requests is drawn for it too (extreme
numbers, empty or long strings, empty or repeated arrays, allowed nulls). Every other API and version
kafka-python knows is sent as is (the broker closes the connection, or answers ApiVersions with v0
and its ranges). Each frame goes on its own connection; the broker may answer it or close the
connection, as Kafka would. Meanwhile a probe client on one long-lived connection must keep getting
answers, and at the end the broker's log must hold no stack trace and no failed request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import struct
from collections.abc import Callable

import pytest

from kafkito.broker.handlers import supported_versions
from kafkito.protocol.codec import MESSAGES, REQUESTS
from tests.protocol.samples import frame, odd_request, sample_request
from tests.support.brokers import ProcessBroker
from tests.support.wire import WireClient

SEED = 12_2026
MUTANTS_PER_VERSION = 30
ODD_PER_VERSION = 5
CONCURRENCY = 16
ANSWER_WAIT_S = 1.0  # then the connection is dropped: a parked request (JoinGroup, Fetch) is cancelled
PROBE_EVERY = 100


def _mutate(payload: bytes, rng: random.Random) -> bytes:
    data = bytearray(payload)
    start = 4 if rng.random() < 0.9 else 0  # mostly keep api key and version: reach the handlers
    for _ in range(rng.randint(1, 3)):
        if len(data) <= start:
            break
        at = rng.randrange(start, len(data))
        op = rng.randrange(7)
        if op == 0:
            data[at] ^= rng.randrange(1, 256)
        elif op == 1:
            data[at : at + 2] = b"\xff\xff"  # an int16 length of -1, or a compact length of 0 + more
        elif op == 2:
            data[at : at + 4] = b"\xff\xff\xff\xff"
        elif op == 3:
            data[at : at + 4] = struct.pack(">i", rng.choice((0x7FFFFFFF, 1 << 20, 65_535, -2)))
        elif op == 4:
            del data[at:]
        elif op == 5:
            data[at:at] = rng.randbytes(rng.randint(1, 8))
        else:
            end = min(len(data), at + rng.randint(1, 16))
            data[at:end] = bytes(end - at) if rng.random() < 0.5 else data[at:end] * 2
    return bytes(data)


def _unsupported() -> list[tuple[int, int]]:
    """The APIs and versions kafka-python knows and the broker does not answer (it closes on them)."""
    supported = {(key, v) for key, lo, hi in supported_versions() for v in range(lo, hi + 1)}
    known = [
        (key, v) for key in MESSAGES for v in range(REQUESTS[key].min_version, REQUESTS[key].max_version + 1)
    ]
    return [kv for kv in known if kv not in supported]


def corpus() -> list[bytes]:
    """Every supported API and version: the genuine frame, its seeded mutants (size-prefixed) and odd
    requests; then the genuine frame of every other API and version kafka-python knows."""
    rng = random.Random(SEED)
    frames: list[bytes] = []
    for key, lo, hi in supported_versions():
        for version in range(lo, hi + 1):
            genuine = frame(sample_request(key, version), correlation_id=len(frames), client_id="fuzz")
            frames.append(genuine)
            payload = genuine[4:]
            for _ in range(MUTANTS_PER_VERSION):
                mutant = _mutate(payload, rng)
                frames.append(struct.pack(">i", len(mutant)) + mutant)
            for _ in range(ODD_PER_VERSION):
                odd = odd_request(key, version, rng)
                frames.append(frame(odd, correlation_id=len(frames), client_id="fuzz"))
    frames += [frame(sample_request(key, version), client_id="fuzz") for key, version in _unsupported()]
    return frames


async def _send_one(port: int, data: bytes, limit: asyncio.Semaphore) -> None:
    async with limit:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(data)
            await writer.drain()
            # an answer, or the broker closing the connection, or a parked request we give up on
            with contextlib.suppress(TimeoutError, ConnectionError):
                await asyncio.wait_for(reader.read(1 << 16), ANSWER_WAIT_S)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


async def _fuzz(port: int, frames: list[bytes], probe: Callable[[], None]) -> None:
    limit = asyncio.Semaphore(CONCURRENCY)
    for start in range(0, len(frames), PROBE_EVERY):
        await asyncio.gather(*(_send_one(port, f, limit) for f in frames[start : start + PROBE_EVERY]))
        await asyncio.to_thread(probe)


@pytest.mark.slow
def test_mutated_requests_of_every_api_and_version_leave_no_traceback(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    broker = broker_process(**{"group.initial.rebalance.delay.ms": 0})
    frames = corpus()
    per_version = 1 + MUTANTS_PER_VERSION + ODD_PER_VERSION
    supported = sum((hi - lo + 1) * per_version for _, lo, hi in supported_versions())
    assert len(frames) == supported + len(_unsupported())
    with WireClient(broker.bootstrap) as client:

        def probe() -> None:
            assert client.request(18, 0).error_code == 0  # ApiVersions
            assert client.request(3, 1, topics=[]).brokers  # Metadata

        probe()
        asyncio.run(_fuzz(broker.port, frames, probe))
        probe()
    assert broker.proc is not None and broker.proc.poll() is None, "the broker exited"
    log = broker.log_path.read_text()
    events = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    failed = [e for e in events if e.get("event") == "request.failed" or "exception" in e]
    assert not failed, failed[:3]
    assert "Traceback" not in log, log[log.index("Traceback") - 2000 : log.index("Traceback") + 3000]
