"""Segments share a bounded LRU of open descriptors (broker/log/file_handles.py): more segments than
descriptors still append, read, flush and send regions correctly."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kafkito.broker.log.file_handles import FileHandles, pool_capacity
from kafkito.broker.log.segment import Segment
from kafkito.broker.log.storage import StorageFailure
from tests.log.helpers import batch, decode, records

SEGMENTS = 12
CAPACITY = 4


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def _segments(tmp_path: Path, files: FileHandles) -> list[Segment]:
    return [Segment.create(tmp_path, base * 100, 4096, 0, files=files) for base in range(SEGMENTS)]


def test_more_segments_than_descriptors_append_and_read_back(tmp_path: Path) -> None:
    files = FileHandles(CAPACITY)
    before = _open_descriptors()
    segments = _segments(tmp_path, files)
    for round_ in range(3):
        for s in segments:
            s.append(batch(records(2, start=round_ * 2)))
            assert len(files) <= CAPACITY
            assert _open_descriptors() <= before + CAPACITY
    assert files.evicted > 0
    for s in segments:
        s.flush()  # a segment whose descriptor was closed is opened again to be synced
        data = s.read(0, s.size)
        assert [rec.value for _, rec in decode(data)] == [rec.value for rec in records(6)]
        region = s.region(0, s.size)
        assert not isinstance(region, bytes)
        assert region.read() == data  # the region's own descriptor outlives an eviction
        region.close()
    for s in segments:
        s.close()
    assert len(files) == 0
    assert _open_descriptors() == before


def test_a_pinned_descriptor_is_not_closed_by_another_thread(tmp_path: Path) -> None:
    """The cleaner reads segments in a thread: a descriptor in use there must stay the segment's."""
    files = FileHandles(1)
    first, second, third = _segments(tmp_path, files)[:3]
    first.append(batch(records(1)))
    fd = files.acquire(first)  # as a read in another thread would hold it
    opened = threading.Thread(target=lambda: second.append(batch(records(1))))
    opened.start()
    opened.join()
    assert first.fd == fd  # pinned: the pool ran over its capacity instead
    assert os.pread(fd, 4, 0) == first.read(0, 4)
    files.release(first)
    third.read(0, 1)
    assert first.fd == second.fd == -1  # unpinned, both go at the next open
    assert len(files) == 1


def test_a_closed_segment_is_not_opened_again(tmp_path: Path) -> None:
    files = FileHandles(CAPACITY)
    (segment,) = _segments(tmp_path, files)[:1]
    segment.close()
    with pytest.raises(StorageFailure, match="closed"):
        segment.read(0, 1)
    assert segment.fd == -1


def test_the_soft_limit_is_raised_to_the_hard_one(tmp_path: Path) -> None:
    """In a child whose soft limit is below its hard one (a shell's default of 1024 under a higher
    hard limit); raising it again when it already is changes nothing."""
    script = (
        "import resource\n"
        "from kafkito.broker.log.file_handles import raise_open_files_limit, segment_files\n"
        "print(raise_open_files_limit(), raise_open_files_limit(), segment_files.capacity,\n"
        "      *resource.getrlimit(resource.RLIMIT_NOFILE))\n"
    )

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 1024))

    out = subprocess.run(
        [sys.executable, "-c", script], preexec_fn=limit, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["1024", "1024", str(pool_capacity(1024)), "1024", "1024"]
    assert pool_capacity(1024) == 256
