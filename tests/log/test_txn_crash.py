"""SIGKILL a process writing two producers' interleaved transactions: after reopening, the open
transactions, the last stable offset, the aborted index and what read_committed sees are exactly
those of the operations that reached the log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from kafka.record.memory_records import MemoryRecords

from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.partition_log import PartitionLog

REPO = Path(__file__).resolve().parents[2]

# The operations, in order: ("data", pid, seq, n) appends n records of a transactional batch,
# ("end", pid, commit) writes a marker. Producers 1 and 2 take turns; producer p's transaction t
# holds 1 + t % 3 batches and aborts when t % 3 == 0.
SCHEDULE = textwrap.dedent(
    """
    def schedule(count):
        state = {1: [0, 0, 0], 2: [0, 0, 0]}  # txn number, batches sent in it, sequence
        ops = []
        while len(ops) < count:
            pid = 1 + len(ops) % 2
            t, sent, seq = state[pid]
            if sent < 1 + t % 3:
                n = 1 + (len(ops) % 4)
                ops.append(("data", pid, seq, n))
                state[pid] = [t, sent + 1, seq + n]
            else:
                ops.append(("end", pid, t % 3 != 0))
                state[pid] = [t + 1, 0, seq]
        return ops
    """
)

CHILD = SCHEDULE + textwrap.dedent(
    """
    import sys
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafkito.broker.log.config import LogConfig
    from kafkito.broker.log.partition_log import PartitionLog

    plog = PartitionLog(sys.argv[1], LogConfig(segment_bytes=int(sys.argv[2])))
    for i, op in enumerate(schedule(100_000)):
        if op[0] == "data":
            _, pid, seq, n = op
            b = DefaultRecordBatchBuilder(2, 0, True, pid, 0, seq, 1 << 20)
            for j in range(n):
                b.append(j, timestamp=1000 + i, key=None, value=b"%d:%d" % (pid, seq + j), headers=[])
            plog.append(bytes(b.build()))
        else:
            plog.append_marker(op[1], 0, op[2])
        sys.stdout.write("ACK %d\\n" % i)
        sys.stdout.flush()
    """
)


def schedule(count: int) -> list[tuple[object, ...]]:
    scope: dict[str, object] = {}
    exec(SCHEDULE, scope)
    return scope["schedule"](count)  # type: ignore[operator,no-any-return]


def expected(ops: list[tuple[object, ...]]) -> tuple[list[tuple[int, int]], int, list[bytes]]:
    """The aborted (producer, first offset) pairs, the LSO and the committed values after `ops`."""
    offset = 0
    open_first: dict[int, int] = {}
    pending: dict[int, list[bytes]] = {1: [], 2: []}
    committed: list[tuple[int, bytes]] = []
    aborted: list[tuple[int, int]] = []
    for op in ops:
        if op[0] == "data":
            _, pid, seq, n = op
            assert isinstance(pid, int) and isinstance(seq, int) and isinstance(n, int)
            open_first.setdefault(pid, offset)
            pending[pid] += [(offset + j, b"%d:%d" % (pid, seq + j)) for j in range(n)]  # type: ignore[misc]
            offset += n
        else:
            _, pid, commit = op
            assert isinstance(pid, int)
            first = open_first.pop(pid, None)
            if commit:
                committed += pending[pid]  # type: ignore[arg-type]
            elif first is not None:
                aborted.append((pid, first))
            pending[pid] = []
            offset += 1
    lso = min(open_first.values(), default=offset)
    values = [v for o, v in sorted(committed) if o < lso]  # type: ignore[misc]
    return aborted, lso, values


def committed_values(plog: PartitionLog) -> list[bytes]:
    """What a read_committed consumer gets: records below the LSO outside aborted transactions."""
    lso = plog.last_stable_offset
    aborted = plog.aborted_entries(0, lso)
    out: list[bytes] = []
    for header in plog.batch_headers():
        if header.base_offset >= lso or header.is_control:
            continue
        if any(
            e.producer_id == header.producer_id and e.first_offset <= header.base_offset <= e.last_offset
            for e in aborted
        ):
            continue
        mem = MemoryRecords(plog.read(header.base_offset, 1))
        out += [r.value for r in mem.next_batch()]
    return out


@pytest.mark.parametrize("segment_bytes", [1 << 20, 700])
def test_a_sigkill_mid_transactions_keeps_the_state_of_what_was_written(
    tmp_path: Path, segment_bytes: int
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path), str(segment_bytes)],
        stdout=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        cwd=REPO,
    )
    assert child.stdout is not None
    out = b""
    while out.count(b"ACK ") < 300:
        chunk = child.stdout.read1(65536)
        assert chunk, "child exited early"
        out += chunk
    child.send_signal(signal.SIGKILL)
    child.wait()
    acks = out.count(b"ACK ") + child.stdout.read().count(b"ACK ")
    plog = PartitionLog(tmp_path, LogConfig(segment_bytes=segment_bytes))
    stored = len(plog.batch_headers())
    assert stored in (acks, acks + 1)  # the operation in flight at the kill may have been written
    aborted, lso, values = expected(schedule(stored))
    assert plog.aborted_transactions(0, plog.high_watermark) == aborted
    assert plog.last_stable_offset == lso
    assert committed_values(plog) == values
    assert len(list(tmp_path.glob("*.txnindex"))) >= (1 if aborted else 0)
