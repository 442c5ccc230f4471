"""Opening a log after a crash: a torn or corrupt tail is cut at the last valid batch and never served."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from kafkito.broker.log.partition_log import PartitionLog

from .helpers import GZIP, batch, config, decode, read_all, records


def fill(path: Path, n: int, **kw: object) -> list[int]:
    """Append n 3-record batches without a clean close; return each batch's end position."""
    plog = PartitionLog(path, config(**kw))
    ends = []
    for i in range(n):
        plog.append(batch(records(3, start=i * 3), compression=GZIP if i % 2 else 0))
        ends.append(plog.segments[-1].size)
    return ends


def reopen(path: Path, **kw: object) -> tuple[PartitionLog, list[dict[str, object]]]:
    with capture_logs() as logs:
        plog = PartitionLog(path, config(**kw))
    return plog, logs


def active_file(path: Path) -> Path:
    return sorted(path.glob("*.log"))[-1]


@pytest.mark.parametrize("cut", [1, 12, 30, 61, 70])
def test_a_cut_tail_is_truncated_to_the_last_whole_batch(tmp_path: Path, cut: int) -> None:
    ends = fill(tmp_path, 5)
    seg = active_file(tmp_path)
    os.truncate(seg, ends[-1] - cut)
    plog, logs = reopen(tmp_path)
    assert plog.log_end_offset == 12
    assert os.path.getsize(seg) == ends[-2]
    assert [r for _, r in read_all(plog)] == records(12)
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["log.truncated_invalid_tail"]
    assert plog.append(batch(1)).base_offset == 12


@pytest.mark.parametrize("garbage", [b"\x00" * 100, b"\xff" * 7, os.urandom(4096)])
def test_garbage_after_the_last_batch_is_truncated(tmp_path: Path, garbage: bytes) -> None:
    ends = fill(tmp_path, 4)
    with open(active_file(tmp_path), "ab") as f:
        f.write(garbage)
    plog, logs = reopen(tmp_path)
    assert plog.log_end_offset == 12
    assert os.path.getsize(active_file(tmp_path)) == ends[-1]
    assert any(e["event"] == "log.truncated_invalid_tail" for e in logs)


def test_a_bit_flip_in_the_last_batch_is_caught_by_its_crc(tmp_path: Path) -> None:
    ends = fill(tmp_path, 4)
    with open(active_file(tmp_path), "r+b") as f:
        f.seek(ends[-1] - 5)
        b = f.read(1)
        f.seek(ends[-1] - 5)
        f.write(bytes([b[0] ^ 0x01]))
    plog, logs = reopen(tmp_path)
    assert plog.log_end_offset == 9
    reasons = [e["reason"] for e in logs if e["event"] == "log.truncated_invalid_tail"]
    assert reasons == ["CRC mismatch"]
    for _, r in decode(plog.read(0, 1 << 20)):
        assert r in records(9)


def test_corruption_in_an_older_segment_drops_everything_after_it(tmp_path: Path) -> None:
    fill(tmp_path, 20, segment_bytes=600)
    files = sorted(tmp_path.glob("*.log"))
    assert len(files) > 3
    second = files[1]
    with open(second, "r+b") as f:
        f.seek(8)
        f.write(b"\x00\x00\x00\x01")  # batch length below the minimum
    plog, logs = reopen(tmp_path, segment_bytes=600)
    assert plog.log_end_offset == int(second.name[:-4])
    assert sorted(tmp_path.glob("*.log")) == files[:2]
    assert [r for _, r in read_all(plog)] == records(plog.log_end_offset)
    assert sum(e["event"] == "log.deleted_segment_after_corruption" for e in logs) == len(files) - 2


def test_a_clean_shutdown_is_reopened_without_warnings(tmp_path: Path) -> None:
    fill(tmp_path, 3)
    PartitionLog(tmp_path, config()).close()
    assert (tmp_path / ".clean-shutdown").exists()
    plog, logs = reopen(tmp_path)
    assert not (tmp_path / ".clean-shutdown").exists()
    assert plog.log_end_offset == 9
    assert not [e for e in logs if e["log_level"] == "warning"]


def test_the_active_segment_is_crc_checked_even_after_a_clean_shutdown(tmp_path: Path) -> None:
    ends = fill(tmp_path, 4)
    PartitionLog(tmp_path, config()).close()
    with open(active_file(tmp_path), "r+b") as f:
        f.seek(ends[-1] - 1)
        last = f.read(1)
        f.seek(ends[-1] - 1)
        f.write(bytes([last[0] ^ 0x80]))
    plog, logs = reopen(tmp_path)
    assert plog.log_end_offset == 9
    assert [e["reason"] for e in logs if e["event"] == "log.truncated_invalid_tail"] == ["CRC mismatch"]
