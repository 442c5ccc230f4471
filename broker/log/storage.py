"""Storage failures of the log dir: classify them, log them, take the dir offline.

As in Kafka, an I/O error that may have lost or torn data makes the whole log dir offline: every
partition in it answers KAFKA_STORAGE_ERROR until the broker restarts (and recovers the logs from
disk). kafkito makes one exception, for running out of a resource when nothing was left half-done:
no room (ENOSPC, EDQUOT, EFBIG: the append is rolled back to the last whole batch) or no file
handles (EMFILE, ENFILE). That operation fails with KAFKA_STORAGE_ERROR and the dir stays online,
so freeing space or handles is enough. A failed fsync is always fatal (the kernel may have dropped
the dirty pages: retrying would report a success that is not true), and so is a failed rollback.
Every failure is logged at error level with its path; the broker's log rate limit
(`broker.log_rate`) keeps a failing disk from flooding the log.
"""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

import structlog

from kafkito.broker.log.errors import KafkaStorageError

log = structlog.get_logger("kafkito.log")

NOT_FATAL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EMFILE, errno.ENFILE})


class StorageFailure(KafkaStorageError):
    """An OSError met while touching `path`, as the KAFKA_STORAGE_ERROR a client gets."""

    def __init__(self, path: Path | str, op: str, cause: OSError, *, fatal: bool | None = None) -> None:
        self.path = str(path)
        self.op = op
        self.errno = cause.errno
        self.fatal = cause.errno not in NOT_FATAL if fatal is None else fatal
        self.reported = False
        super().__init__(f"{op} {self.path} failed: {cause.strerror or cause}")

    @property
    def errno_name(self) -> str:
        return errno.errorcode.get(self.errno or 0, str(self.errno))


class LogDirHealth:
    """Whether one log dir is usable, and the one place its storage failures are logged."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self.offline_reason: str | None = None

    @property
    def offline(self) -> bool:
        return self.offline_reason is not None

    def check(self) -> None:
        """Raise KAFKA_STORAGE_ERROR once the dir is offline."""
        if self.offline_reason is not None:
            raise KafkaStorageError(f"log dir {self.path} is offline: {self.offline_reason}")

    def report(self, failure: StorageFailure, **context: object) -> None:
        """Log the failure at error level; a fatal one takes the dir offline (logged once)."""
        log.error(
            "log.storage_error",
            path=failure.path,
            op=failure.op,
            errno=failure.errno_name,
            error=str(failure.message),
            fatal=failure.fatal,
            **context,
        )
        if failure.fatal and self.offline_reason is None:
            self.offline_reason = f"{failure.op} {failure.path}: {failure.errno_name}"
            log.error("log.dir_offline", log_dir=self.path, reason=self.offline_reason, **context)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Guarded(Protocol):
    dir_health: LogDirHealth
    directory: Path
    topic: str
    partition: int


G = TypeVar("G", bound=_Guarded)
P = ParamSpec("P")
R = TypeVar("R")


def storage_guarded(method: Callable[Concatenate[G, P], R]) -> Callable[Concatenate[G, P], R]:
    """A log method whose OSErrors become KAFKA_STORAGE_ERROR, each reported once to the dir's health."""

    @functools.wraps(method)
    def guarded(self: G, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except StorageFailure as failure:
            if not failure.reported:
                failure.reported = True
                self.dir_health.report(failure, topic=self.topic, partition=self.partition)
            raise
        except OSError as e:
            wrapped = StorageFailure(e.filename or self.directory, method.__name__, e)
            wrapped.reported = True
            self.dir_health.report(wrapped, topic=self.topic, partition=self.partition)
            raise wrapped from e

    return guarded
