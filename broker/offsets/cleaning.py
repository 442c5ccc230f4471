"""Log compaction off the event loop: plan in a worker thread, install on the loop, offsets topic first."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.offsets.log_sink import OFFSETS_TOPIC

if TYPE_CHECKING:
    from kafkito.broker.log.manager import LogManager
    from kafkito.broker.log.partition_log import PartitionLog

log = structlog.get_logger("kafkito.cleaner")


class BackgroundCleaner:
    """One compaction pass per `kick()` (the broker's `log-cleaner` periodic task), never two at once.

    Planning reads whole closed segments and decodes every record: seconds for a large
    `__consumer_offsets` segment, which must not stall heartbeats. `plan_compaction` only reads
    closed segments and writes `.cleaned` files, so it runs in a thread; `install_cleaned` swaps
    them in on the loop and refuses a plan whose segments changed meanwhile.
    """

    def __init__(self, logs: LogManager, wall_ms: Callable[[], int]) -> None:
        self._logs = logs
        self._wall_ms = wall_ms
        self._task: asyncio.Task[int] | None = None

    def kick(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.run_pass())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def run_pass(self) -> int:
        """Compact every compacted log that is due, `__consumer_offsets` first; returns how many were."""
        logs = sorted(
            (p for p in self._logs.logs() if p.config.compact),
            key=lambda p: (p.topic != OFFSETS_TOPIC, p.topic, p.partition),
        )
        compacted = 0
        for plog in logs:
            try:
                compacted += await self._compact(plog)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("cleaner.failed", topic=plog.topic, partition=plog.partition)
        return compacted

    async def _compact(self, plog: PartitionLog) -> int:
        from kafkito.broker.log import cleaner  # only when compacting: keeps it off the start-up path

        plan = await asyncio.to_thread(cleaner.plan_compaction, plog, self._wall_ms())
        if plan is None:
            return 0
        return 1 if cleaner.install(plog, plan) else 0
