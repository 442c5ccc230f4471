"""Stopping that always finishes: each component closes on its own and its failure is logged, not
raised; SIGINT/SIGTERM start the stop and a second one exits at once."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import structlog

if TYPE_CHECKING:
    from kafkito.broker.log.manager import LogManager

log = structlog.get_logger("kafkito.broker")


class StopSteps:
    """Runs the steps of a stop one after another; a step that fails is logged and the rest still run."""

    def __init__(self) -> None:
        self.failed: list[str] = []

    @property
    def clean(self) -> bool:
        return not self.failed

    def run(self, name: str, step: Callable[[], object]) -> None:
        try:
            step()
        except Exception as exc:
            self._failed(name, exc)

    async def run_async(self, name: str, step: Coroutine[Any, Any, object]) -> None:
        try:
            await step
        except Exception as exc:
            self._failed(name, exc)

    def _failed(self, name: str, exc: Exception) -> None:
        self.failed.append(name)
        # An OSError (or a failure caused by one) names its path and errno, which says it all;
        # anything else is a bug: keep its stack.
        io_error = isinstance(exc, OSError) or isinstance(exc.__cause__, OSError)
        log.error("broker.stop_step_failed", step=name, error=str(exc), exc_info=not io_error)


def close_logs(logs: LogManager, steps: StopSteps) -> None:
    """Close each partition log on its own (one whose directory is gone must not keep the others open)."""
    for plog in list(logs.logs()):
        steps.run(f"partition {plog.topic}-{plog.partition} ({plog.directory})", plog.close)
    steps.run("log manager", logs.close)


class StopSignals:
    """SIGINT/SIGTERM: the first calls `request_stop`, a second exits the process at once (128 + signal)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, loop: asyncio.AbstractEventLoop, request_stop: Callable[[], None]) -> None:
        self._loop = loop
        self._request_stop = request_stop
        self._received: str | None = None
        for sig in self.SIGNALS:
            loop.add_signal_handler(sig, self._on_signal, sig)

    def _on_signal(self, sig: signal.Signals) -> None:
        if self._received is None:
            self._received = sig.name
            log.info("broker.signal", signal=sig.name, action="stop (send it again to exit at once)")
            self._request_stop()
            return
        log.warning("broker.forced_exit", signal=sig.name, first_signal=self._received)
        sys.stderr.flush()
        os._exit(128 + sig.value)

    def remove(self) -> None:
        for sig in self.SIGNALS:
            self._loop.remove_signal_handler(sig)
