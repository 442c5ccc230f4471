"""SIGKILL a process that is appending: every acknowledged batch is there after reopening, nothing corrupt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.partition_log import PartitionLog

from .helpers import decode

REPO = Path(__file__).resolve().parents[2]
PID = 77

# Batch i holds 1 + i % 5 records with key b"i" and values b"i:j" * 20, from idempotent producer 77.
CHILD = textwrap.dedent(
    """
    import sys
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafkito.broker.log.config import LogConfig
    from kafkito.broker.log.partition_log import PartitionLog

    plog = PartitionLog(sys.argv[1], LogConfig(segment_bytes=int(sys.argv[2])))
    i = seq = 0
    while True:
        n = 1 + i % 5
        b = DefaultRecordBatchBuilder(2, i % 3, False, 77, 0, seq, 1 << 20)
        for j in range(n):
            b.append(j, timestamp=1000 + i, key=b"%d" % i, value=b"%d:%d" % (i, j) * 20, headers=[])
        info = plog.append(bytes(b.build()))
        sys.stdout.write("ACK %d %d %d\\n" % (i, info.base_offset, info.last_offset))
        sys.stdout.flush()
        i += 1
        seq += n
    """
)


def _kill_after(data_dir: Path, segment_bytes: int, acks: int) -> list[tuple[int, int, int]]:
    """Run the appending child, SIGKILL it after `acks` acknowledgements; return every ack it printed."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(data_dir), str(segment_bytes)],
        stdout=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        cwd=REPO,
    )
    assert child.stdout is not None
    out = b""
    while out.count(b"ACK ") < acks:
        chunk = child.stdout.read1(65536)
        assert chunk, "child exited early"
        out += chunk
    child.send_signal(signal.SIGKILL)
    child.wait()
    out += child.stdout.read()
    child.stdout.close()
    # Structlog also writes to stdout; a line cut by the kill is not an acknowledgement.
    lines = [line.split() for line in out.split(b"\n")[:-1] if line.startswith(b"ACK ")]
    return [(int(i), int(base), int(last)) for _, i, base, last in lines]


@pytest.mark.parametrize("segment_bytes", [4096, 1 << 30])
def test_every_acknowledged_batch_survives_sigkill(tmp_path: Path, segment_bytes: int) -> None:
    acked = _kill_after(tmp_path, segment_bytes, 400)
    assert len(acked) >= 400

    plog = PartitionLog(tmp_path, LogConfig(segment_bytes=segment_bytes))
    stored = []
    offset = 0
    while offset < plog.log_end_offset:
        got = decode(plog.read(offset, 1 << 20))  # decode() checks every batch's CRC
        stored.extend(got)
        offset = got[-1][0] + 1
    assert [o for o, _ in stored] == list(range(plog.log_end_offset))
    by_offset = {o: r for o, r in stored}
    for i, base, last in acked:
        n = 1 + i % 5
        assert last - base + 1 == n
        assert [by_offset[base + j].key for j in range(n)] == [b"%d" % i] * n
        assert [by_offset[base + j].value for j in range(n)] == [b"%d:%d" % (i, j) * 20 for j in range(n)]
    # Producer state came back from the log: the next sequence continues where the log ends.
    entry = plog.producers.entry(PID)
    assert entry is not None and entry.last_seq == plog.log_end_offset - 1
