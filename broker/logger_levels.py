"""Log levels per logger name, as Kafka's BROKER_LOGGER config resource sets them (log4j's levels by
logger name, changed at run time by IncrementalAlterConfigs, listed by DescribeConfigs).

The loggers are structlog's, named `kafkito.<area>` (`structlog.get_logger(name)`): the logger factory
remembers each name when the logger is first used (as log4j creates a logger on first request), and a
processor drops an event below the level of its logger, the level of the closest named ancestor
(`kafkito.broker` covers `kafkito.broker.log.manager`), else the `root` level. Like Kafka's, the
levels are the process's and are not persisted: a restart starts from the configured level.

One limit: the filtering wrapper structlog is configured with drops events below the level the
process was started with before any processor sees them, so a logger set below that level (DEBUG on a
broker started at INFO) is listed at its new level but logs no more than before.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, WrappedLogger

ROOT = "root"
VALID_LEVELS = ("FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE")
_NUMERIC = {"FATAL": 50, "ERROR": 40, "WARN": 30, "INFO": 20, "DEBUG": 10, "TRACE": 5}
_BY_NUMBER = {v: k for k, v in _NUMERIC.items()}
_METHOD = {
    "critical": 50, "exception": 40, "error": 40, "err": 40, "warning": 30, "warn": 30, "info": 20,
    "msg": 20, "debug": 10,
}  # fmt: skip


class LoggerLevels:
    """The root level, the levels set per logger name, and the logger names in use."""

    def __init__(self) -> None:
        self.root = logging.INFO
        self.overrides: dict[str, int] = {}
        self.known: set[str] = set()

    def set_root(self, level: int) -> None:
        self.root = level

    def effective(self, name: str) -> int:
        overrides = self.overrides
        while name:
            level = overrides.get(name)
            if level is not None:
                return level
            name = name.rpartition(".")[0]
        return self.root

    def exists(self, name: str) -> bool:
        return name == ROOT or name in self.known or name in self.overrides

    def set(self, name: str, level: str) -> None:
        if name == ROOT:
            self.root = _NUMERIC[level]
        else:
            self.overrides[name] = _NUMERIC[level]

    def delete(self, name: str) -> None:
        """The logger follows its ancestors (or root) again."""
        self.overrides.pop(name, None)

    def describe(self) -> list[tuple[str, str]]:
        """(logger name, effective level) of every logger in use, root first."""
        names = sorted(self.known | set(self.overrides))
        return [(ROOT, _BY_NUMBER[self.root])] + [(n, _BY_NUMBER[self.effective(n)]) for n in names]


LEVELS = LoggerLevels()  # one per process, as structlog's configuration is


class NamedPrintLogger(structlog.PrintLogger):
    """structlog's PrintLogger, knowing the name it was asked for."""

    def __init__(self, file: TextIO | None = None, name: str = "") -> None:
        super().__init__(file)
        self.name = name


class NamedPrintLoggerFactory:
    """Makes NamedPrintLoggers and remembers their names (the loggers BROKER_LOGGER lists)."""

    def __init__(self, file: TextIO | None = None) -> None:
        self._file = file or sys.stderr

    def __call__(self, *args: Any) -> NamedPrintLogger:
        name = str(args[0]) if args and args[0] is not None else ""
        if name:
            LEVELS.known.add(name)
        return NamedPrintLogger(self._file, name)


def filter_by_logger(logger: WrappedLogger, method: str, event: EventDict) -> EventDict:
    """Drop an event below its logger's level (a no-op while no logger has a level of its own)."""
    levels = LEVELS
    if levels.overrides or levels.root != logging.INFO:
        name = getattr(logger, "name", "")
        if _METHOD.get(method, 20) < levels.effective(name):
            raise structlog.DropEvent
    return event
