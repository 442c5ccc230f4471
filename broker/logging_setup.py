"""structlog setup: a console renderer on a TTY, JSON lines otherwise."""

from __future__ import annotations

import logging
import sys

import structlog

from kafkito.broker.log_rate import rate_limit

# Whether debug events are rendered; hot paths check it before building a debug event.
debug_enabled = True

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def configure_logging(level: str = "info", fmt: str = "auto") -> None:
    """Configure structlog once for the process. `fmt` is `console`, `json` or `auto` (console on a TTY)."""
    global debug_enabled
    debug_enabled = _LEVELS[level.lower()] <= logging.DEBUG
    if fmt == "auto":
        fmt = "console" if sys.stderr.isatty() else "json"
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer() if fmt == "console" else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            rate_limit,  # before any formatting: a dropped event costs nothing more
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level.lower()]),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
