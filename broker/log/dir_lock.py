"""One broker per data dir: an exclusive `flock` on `<data dir>/.lock`, held for the broker's life.

Kafka locks `<log.dir>/.lock` the same way. The lock belongs to an open file description, so the
kernel drops it when the process dies however it dies (a `kill -9` leaves no stale lock), and a
second broker in the same process opens its own description and is refused just as another
process is. The file itself stays; only the lock on it matters. It holds the pid of the broker that
last took it, to name the holder in the refusal.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_FILE = ".lock"


class DataDirInUse(Exception):
    """Another broker (in this process or another) holds the data dir's lock."""

    def __init__(self, data_dir: Path, holder: str) -> None:
        who = f" (pid {holder})" if holder else ""
        super().__init__(
            f"data dir {data_dir} is in use by another broker{who}: stop it or pass --data-dir DIR"
        )
        self.data_dir = data_dir


class DataDirLock:
    """The held lock of one data dir; `release()` (idempotent) lets the next broker take it."""

    def __init__(self, data_dir: Path, fd: int) -> None:
        self.data_dir = data_dir
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, data_dir: Path) -> DataDirLock:
        """Lock `data_dir` (made if missing), or raise DataDirInUse at once: it never waits."""
        data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise DataDirInUse(data_dir, holder) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(data_dir, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Closing the descriptor drops the lock (the file is left for the next broker)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        return ""
