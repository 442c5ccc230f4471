"""Storage failures in the log: the error clients get, the line the operator reads, the dir going offline."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from kafkito.broker.log.errors import KafkaStorageError
from kafkito.broker.log.partition_log import PartitionLog
from kafkito.broker.log.storage import LogDirHealth, StorageFailure

from .helpers import batch, config, read_all, records


def test_running_out_of_room_is_not_fatal_but_an_io_error_is() -> None:
    full = StorageFailure("/x", "write", OSError(errno.ENOSPC, "No space left on device"))
    broken = StorageFailure("/x", "read", OSError(errno.EIO, "Input/output error"))
    assert (full.fatal, full.errno_name, broken.fatal) == (False, "ENOSPC", True)
    health = LogDirHealth("/data")
    with capture_logs() as logs:
        health.report(full)
        health.check()
        health.report(broken)
    assert health.offline
    with pytest.raises(KafkaStorageError, match="offline"):
        health.check()
    assert [(e["event"], e["log_level"]) for e in logs] == [
        ("log.storage_error", "error"),
        ("log.storage_error", "error"),
        ("log.dir_offline", "error"),
    ]
    assert logs[0]["path"] == "/x" and logs[2]["log_dir"] == "/data"


def test_an_offline_dir_answers_storage_errors_and_closes_unclean(tmp_path: Path) -> None:
    health = LogDirHealth(tmp_path)
    plog = PartitionLog(tmp_path / "t-0", config(), topic="t", dir_health=health)
    plog.append(batch(records(3)))
    health.report(StorageFailure(tmp_path, "fsync", OSError(errno.EIO, "Input/output error"), fatal=True))
    with pytest.raises(KafkaStorageError):
        plog.append(batch(1))
    with pytest.raises(KafkaStorageError):
        plog.read(0, 1000)
    plog.close()
    assert not (tmp_path / "t-0" / ".clean-shutdown").exists()  # the next start recovers it
    reopened = PartitionLog(tmp_path / "t-0", config(), topic="t")
    assert [r for _, r in read_all(reopened)] == records(3)


def test_a_segment_file_that_cannot_be_created_is_a_fatal_storage_error(tmp_path: Path) -> None:
    health = LogDirHealth(tmp_path)
    plog = PartitionLog(tmp_path / "t-0", config(), topic="t", dir_health=health)
    plog.append(batch(1))
    os.unlink(plog.segments[-1].path)
    os.rmdir(tmp_path / "t-0")
    with capture_logs() as logs, pytest.raises(KafkaStorageError):
        plog.roll()
    (event,) = [e for e in logs if e["event"] == "log.storage_error"]
    assert event["op"] == "open" and event["errno"] == "ENOENT" and event["fatal"] is True
    assert event["path"] == str(tmp_path / "t-0" / "00000000000000000001.log")
    assert health.offline
