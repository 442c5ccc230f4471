"""The open descriptors of segment files: a bounded LRU shared by every segment of the process.

A broker with thousands of partitions cannot hold a descriptor per segment under a default
`ulimit -n` of 1024. Segments therefore open their file on first use and the least recently used
ones are closed when more than `capacity` are open; the next use opens the file again.

Closing a descriptor loses nothing: segments write with `os.write`, so no bytes wait in a user-space
buffer, and `fsync` acts on the file, not the descriptor, so a partition's flush re-opens a closed
segment and syncs what any earlier descriptor wrote. A FileRegion keeps its own duplicate
descriptor (region.py), so a response still being sent is unaffected by the LRU.

Several threads use segments (the event loop; the cleaner's compaction plans; closing the logs at
stop), so a segment's descriptor is pinned while a system call uses it: a pinned descriptor is never
closed by another thread's eviction (which would close it under the call, or worse, let the number
be reused for another file). When every open descriptor is pinned, the pool runs over its capacity
for a moment rather than wait.

At start the broker raises its soft RLIMIT_NOFILE to the hard limit (`raise_open_files_limit`) and
sizes the pool to a quarter of it, between 64 and 512 descriptors, leaving the rest to sockets,
FileRegions and the other files of the log dir.
"""

from __future__ import annotations

import errno
import os
import threading
from collections import OrderedDict
from typing import Protocol

import structlog

log = structlog.get_logger("kafkito.log")

MIN_CAPACITY = 64
MAX_CAPACITY = 512
DEFAULT_CAPACITY = 256  # until the broker sizes the pool from its limit: right for `ulimit -n 1024`
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)


class Holder(Protocol):
    """What the pool needs of a segment: its path, its descriptor (-1 when closed) and its pin count."""

    fd: int
    pins: int

    @property
    def path(self) -> os.PathLike[str]: ...


class FileHandles:
    """At most about `capacity` open segment descriptors, the least recently used closed first."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, flags: int = os.O_RDWR | os.O_APPEND) -> None:
        self.capacity = max(1, capacity)
        self.flags = flags | os.O_CLOEXEC
        self._lock = threading.Lock()
        self._open: OrderedDict[Holder, None] = OrderedDict()  # oldest first
        self.opened = 0  # files opened (again): what a test or a benchmark reads
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._open)

    def acquire(self, holder: Holder) -> int:
        """The holder's descriptor, opened if need be, pinned until `release`. Raises OSError."""
        with self._lock:
            fd = holder.fd
            if fd >= 0:
                self._open.move_to_end(holder)
            else:
                fd = self._open_file(holder)
            holder.pins += 1
            return fd

    def release(self, holder: Holder) -> None:
        with self._lock:
            holder.pins -= 1

    def adopt(self, holder: Holder, fd: int) -> None:
        """Count a descriptor the holder has just opened itself (a new file) as one of the pool's."""
        with self._lock:
            holder.fd = fd
            self._open[holder] = None
            self._evict_over(self.capacity)

    def close(self, holder: Holder) -> None:
        """Close the holder's descriptor for good (the segment is closed or deleted)."""
        with self._lock:
            self._open.pop(holder, None)
            fd, holder.fd = holder.fd, -1
        if fd >= 0:
            os.close(fd)

    def resize(self, capacity: int) -> None:
        with self._lock:
            self.capacity = max(1, capacity)
            self._evict_over(self.capacity)

    def _open_file(self, holder: Holder) -> int:
        self._evict_over(self.capacity - 1)
        try:
            fd = os.open(holder.path, self.flags)
        except OSError as e:
            if e.errno not in _OUT_OF_DESCRIPTORS or not self._evict_over(len(self._open) - 1):
                raise
            fd = os.open(holder.path, self.flags)  # one descriptor was given back: try once more
        holder.fd = fd
        self._open[holder] = None
        self.opened += 1
        return fd

    def _evict_over(self, keep: int) -> bool:
        """Close the least recently used unpinned descriptors until at most `keep` stay open."""
        closed = False
        pinned: list[Holder] = []
        while self._open and len(self._open) + len(pinned) > keep:
            holder, _ = self._open.popitem(last=False)
            if holder.pins:
                pinned.append(holder)
                continue
            fd, holder.fd = holder.fd, -1
            os.close(fd)
            self.evicted += 1
            closed = True
        for holder in reversed(pinned):  # back where they were, the oldest first
            self._open[holder] = None
            self._open.move_to_end(holder, last=False)
        return closed


segment_files = FileHandles()  # the process's pool: every segment of every log uses it


def raise_open_files_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit (nothing changes when it already is) and size
    the segment pool from it; returns the soft limit now in force."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return DEFAULT_CAPACITY * 4
    infinity = resource.RLIM_INFINITY
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != infinity else 1 << 20  # Linux's default fs.nr_open
    if soft != infinity and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as e:
            log.warning("log.open_files_limit_not_raised", soft=soft, hard=hard, error=str(e))
    segment_files.resize(pool_capacity(soft))
    return soft


def pool_capacity(soft_limit: int) -> int:
    """A quarter of the descriptors the process may open, within [MIN_CAPACITY, MAX_CAPACITY]."""
    if soft_limit < 0:  # RLIM_INFINITY
        return MAX_CAPACITY
    return max(MIN_CAPACITY, min(MAX_CAPACITY, soft_limit // 4))
