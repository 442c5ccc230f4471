"""CreateTopics' and CreatePartitions' creations off the event loop, one at a time.

Creating a partition is a handful of file-system calls (its directory, its marker file, its first
segment file), so a topic of thousands of partitions takes seconds. Those calls run in a worker
thread, which holds nothing of the manager's; the loop keeps answering other clients meanwhile.
Only when every partition exists does the loop record the change in the metadata log and make the
topic, or its new partitions, visible all at once: Metadata never sees a topic half-created.

As Kafka's controller does, changes are made one after the other (a lock): a CreateTopics naming a
topic whose creation is under way waits for it and is then answered TOPIC_ALREADY_EXISTS. The name of
a topic being created is taken at once (`LogManager.creating`), so an auto-creation in between is
refused too. A creation goes on to its end even when the client that asked disconnects, as Kafka's
does once the controller has it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from kafkito.broker.log.metadata_log import TopicInfo, collision_name

if TYPE_CHECKING:
    from kafkito.broker.log.manager import LogManager


class TopicCreation:
    """Creates topics and partitions for requests, through one LogManager (`LogManager.creation`)."""

    def __init__(self, logs: LogManager) -> None:
        self._logs = logs
        self._lock = asyncio.Lock()
        self._running: set[asyncio.Task[TopicInfo]] = set()

    async def create_topic(
        self, name: str, num_partitions: int, replication_factor: int, configs: Mapping[str, str | None]
    ) -> TopicInfo:
        """Create a topic (-1 partitions / replication factor: the broker defaults)."""
        return await self._run(self._create_topic(name, num_partitions, replication_factor, configs))

    async def create_partitions(self, name: str, total: int) -> TopicInfo:
        """Grow a topic to `total` partitions."""
        return await self._run(self._create_partitions(name, total))

    async def _run(self, work: Coroutine[Any, Any, TopicInfo]) -> TopicInfo:
        task = asyncio.ensure_future(work)
        self._running.add(task)  # a strong reference while it runs (the loop keeps only weak ones)
        task.add_done_callback(self._running.discard)
        return await asyncio.shield(task)

    async def _create_topic(
        self, name: str, num_partitions: int, replication_factor: int, configs: Mapping[str, str | None]
    ) -> TopicInfo:
        logs = self._logs
        async with self._lock:
            info, rf = logs.new_topic(name, num_partitions, replication_factor, configs)
            key = collision_name(name)
            logs.creating[key] = name
            try:
                opened = await asyncio.to_thread(logs.open_partitions, info, range(info.partitions))
            finally:
                del logs.creating[key]
            logs.install_topic(info, rf, opened)
            return info

    async def _create_partitions(self, name: str, total: int) -> TopicInfo:
        logs = self._logs
        async with self._lock:
            info = logs.create_partitions(name, total, validate_only=True)
            before = logs.topic(name)
            assert before is not None  # create_partitions checked it
            opened = await asyncio.to_thread(logs.open_partitions, info, range(before.partitions, total))
            return logs.install_partitions(before, info, opened)
