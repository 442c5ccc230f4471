"""structlog setup: a console renderer on a TTY, JSON lines otherwise; API keys logged by name."""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

import structlog
from structlog.typing import EventDict, WrappedLogger

from kafkito.broker.log_rate import rate_limit
from kafkito.broker.logger_levels import LEVELS, NamedPrintLoggerFactory, filter_by_logger

# Whether debug events are rendered; hot paths check it before building a debug event.
debug_enabled = True

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def api_names(logger: WrappedLogger, method: str, event: EventDict) -> EventDict:
    """`api=18` becomes `api=ApiVersions` (only on events that are emitted: filtered ones never get here)."""
    api = event.get("api")
    if isinstance(api, int) and not isinstance(api, bool):
        from kafkito.protocol.codec import MESSAGES

        found = MESSAGES.get(api)
        if found is not None:
            event["api"] = found[1]
    return event


def colors_wanted(stream: TextIO) -> bool:
    """ANSI colours only on a terminal (not a pipe, a file or pytest's capture) and without NO_COLOR."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def configure_logging(level: str = "info", fmt: str = "auto") -> None:
    """Configure structlog once for the process. `fmt` is `console`, `json` or `auto` (console on a TTY).

    The console renderer colours its lines only when stderr is a terminal: piped to a file, a CI log or
    pytest's capture, the lines are plain text.
    """
    global debug_enabled
    debug_enabled = _LEVELS[level.lower()] <= logging.DEBUG
    LEVELS.set_root(_LEVELS[level.lower()])
    if fmt == "auto":
        fmt = "console" if sys.stderr.isatty() else "json"
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer(colors=colors_wanted(sys.stderr))
        if fmt == "console"
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            filter_by_logger,  # per-logger levels (BROKER_LOGGER), first: a dropped event costs least
            structlog.contextvars.merge_contextvars,
            rate_limit,  # before any formatting: a dropped event costs nothing more
            api_names,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level.lower()]),
        logger_factory=NamedPrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
