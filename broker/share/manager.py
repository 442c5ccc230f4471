"""ShareManager: the broker's share partitions, share sessions and share-state log, and the work of
ShareFetch and ShareAcknowledge on them (Kafka's SharePartitionManager), driven by the broker clock.

A share partition is built on first use from its persisted state; one never initialized starts where
the group's `share.auto.offset.reset` says (latest by default). Fetches with nothing to give park in
the share-fetch purgatory, watched on (topic, partition), until an append or a release wakes them.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.log.errors import LogError
from kafkito.broker.share.acquire import BATCH_OPTIMIZED, READ_UNCOMMITTED, acquire, fetchable_bytes
from kafkito.broker.share.partition import ShareLimits, SharePartition
from kafkito.broker.share.sessions import ShareSession, ShareSessions
from kafkito.broker.share.state_codec import ShareStateKey
from kafkito.broker.share.state_log import ShareStateLog, StateLogConfig
from kafkito.broker.share.states import AcquiredRange, StateBatch
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import DelayedOperation, Purgatory, Timer

if TYPE_CHECKING:
    from kafkito.broker.log.manager import LogManager
    from kafkito.broker.share.dead_letters import DeadLetters

log = structlog.get_logger("kafkito.share")

Key = tuple[str, uuid.UUID, int]  # (group id, topic id, partition)
# (group id, (log start, log end)) -> the start offset share.auto.offset.reset gives
StartOffset = Callable[[str, tuple[int, int]], int]
LockDuration = Callable[[str], int]  # group id -> share.record.lock.duration.ms


@dataclass(slots=True)
class PartitionFetchResult:
    topic_id: uuid.UUID
    partition: int
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    records: bytes = b""
    ranges: list[AcquiredRange] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FetchParams:
    max_records: int = 500
    max_bytes: int = 0x7FFFFFFF
    mode: int = BATCH_OPTIMIZED
    min_bytes: int = 1
    isolation: int = READ_UNCOMMITTED  # the group's share.isolation.level


class ShareManager:
    """Every share partition of the broker, and the operations the share handlers run on them."""

    def __init__(
        self,
        logs: LogManager,
        timer: Timer,
        limits: ShareLimits,
        state_config: StateLogConfig,
        wall_ms: Callable[[], int],
    ) -> None:
        self.logs = logs
        self.timer = timer
        self.limits = limits
        self.state = ShareStateLog(logs, state_config, wall_ms)
        self.sessions = ShareSessions()
        self.partitions: dict[Key, SharePartition] = {}
        self.purgatory: Purgatory[DelayedShareFetch] = Purgatory("ShareFetch", timer)
        self.start_offset: StartOffset = lambda _group, offsets: offsets[1]
        self.lock_duration: LockDuration = lambda _group: limits.record_lock_duration_ms
        self.dead_letters: DeadLetters | None = None  # share groups' dead-letter queues (KIP-1191)

    def load(self) -> int:
        """Reload `__share_group_state` (at start): the share partitions come back on first use."""
        read = self.state.load()
        if read:
            log.info("share.state_loaded", records=read, partitions=len(self.state.states))
        return read

    # -- share partitions ------------------------------------------------------------------------

    def partition(self, group_id: str, topic_id: uuid.UUID, partition: int) -> SharePartition:
        """The share partition, built from its persisted state (initialized first if it has none);
        raises LogError for an unknown topic or partition."""
        key = (group_id, topic_id, partition)
        sp = self.partitions.get(key)
        if sp is not None:
            return sp
        info = self.logs.topic_by_id(topic_id)
        if info is None:
            raise LogError(f"unknown topic id {topic_id}")
        plog = self.logs.get_log(info.name, partition)
        skey = ShareStateKey(*key)
        persisted = self.state.states.get(skey)
        if persisted is None:
            start = self.start_offset(group_id, (plog.log_start_offset, plog.log_end_offset))
            self.state.initialize(skey, start)
            persisted = self.state.states[skey]
        limits = ShareLimits(
            self.lock_duration(group_id), self.limits.delivery_count_limit, self.limits.max_record_locks
        )
        sp = SharePartition(key, persisted.start_offset, self.timer, limits)
        sp.restore(persisted.start_offset, persisted.batches())
        sp.on_write = lambda start, complete, batches: self._write(skey, start, complete, batches)
        name = info.name
        sp.on_release = lambda: self.wake(name, partition)
        dead_letters = self.dead_letters
        if dead_letters is not None:
            sp.on_archive = lambda archived, why: dead_letters.write(
                group_id, topic_id, partition, archived, why
            )
        self.partitions[key] = sp
        return sp

    def log_offsets(self, topic_id: uuid.UUID, partition: int) -> tuple[int, int]:
        """(log start, log end) of a partition, where share.auto.offset.reset starts; (0, 0) if unknown."""
        info = self.logs.topic_by_id(topic_id)
        if info is None:
            return 0, 0
        try:
            plog = self.logs.get_log(info.name, partition)
        except LogError:
            return 0, 0
        return plog.log_start_offset, plog.log_end_offset

    def _write(self, key: ShareStateKey, start: int, complete: int, batches: list[StateBatch]) -> None:
        self.state.write(key, start, complete, batches)

    # -- ShareFetch / ShareAcknowledge -----------------------------------------------------------

    def fetch_now(
        self, group_id: str, member_id: str, wanted: Sequence[tuple[uuid.UUID, int]], params: FetchParams
    ) -> list[PartitionFetchResult]:
        """Acquire what each wanted partition has for the member (no waiting), as Kafka's
        DelayedShareFetch reads its log: `max_bytes` split evenly among the partitions, each read
        within its share and within what is left of the whole (the first batch of the fetch is taken
        whatever its size), and `max_records` for the whole fetch. A share partition built by this
        fetch (its state read for the first time) acquires from the next fetch on, unless it is the
        only one the fetch built: Kafka initializes share partitions asynchronously and answers as
        soon as one of them can give records."""
        results = [PartitionFetchResult(t, p) for t, p in wanted]
        if params.max_bytes <= 0 or not wanted:
            return results  # Kafka's partition max bytes need a positive request max bytes
        budget_records = max(params.max_records, 1)
        budget_bytes = params.max_bytes
        per_partition = max(params.max_bytes // len(wanted), 1)
        isolation = params.isolation
        built = 0
        for result in results:
            if budget_records <= 0:
                continue
            topic_id, partition = result.topic_id, result.partition
            try:
                info = self.logs.topic_by_id(topic_id)
                if info is None:
                    result.error = ErrorCode.UNKNOWN_TOPIC_ID
                    continue
                fresh = (group_id, topic_id, partition) not in self.partitions
                sp = self.partition(group_id, topic_id, partition)
                plog = self.logs.get_log(info.name, partition)
                if fresh:
                    built += 1
                    if built > 1:
                        continue
                limit = min(per_partition, budget_bytes)
                first = budget_bytes == params.max_bytes
                got = acquire(sp, plog, member_id, budget_records, limit, isolation, params.mode, first)
            except LogError as exc:
                result.error = exc.code
                result.message = str(exc)
                continue
            result.records, result.ranges = got.records, got.ranges
            budget_records -= sum(r.last_offset - r.first_offset + 1 for r in got.ranges)
            budget_bytes = max(budget_bytes - len(got.records), 0)
        return results

    def enough_bytes(
        self, group_id: str, wanted: Sequence[tuple[uuid.UUID, int]], params: FetchParams
    ) -> bool:
        """Whether the wanted partitions hold `min_bytes` a fetch could acquire (Kafka's check, made
        before acquiring: a fetch short of it waits, up to its max wait, for more)."""
        if params.min_bytes <= 1:
            return True
        total = 0
        for topic_id, partition in wanted:
            info = self.logs.topic_by_id(topic_id)
            if info is None:
                return True  # answered at once, with its error
            try:
                plog = self.logs.get_log(info.name, partition)
                sp = self.partition(group_id, topic_id, partition)
            except LogError:
                return True
            total += fetchable_bytes(sp, plog, params.min_bytes - total, params.isolation)
            if total >= params.min_bytes:
                return True
        return False

    def acknowledge(
        self,
        group_id: str,
        member_id: str,
        topic_id: uuid.UUID,
        partition: int,
        batches: Sequence[tuple[int, int, Sequence[int]]],
        renew: bool = False,
    ) -> ErrorCode:
        try:
            sp = self.partition(group_id, topic_id, partition)
        except LogError as exc:
            return exc.code
        return sp.acknowledge(member_id, batches, renew)

    def park(
        self,
        group_id: str,
        member_id: str,
        wanted: Sequence[tuple[uuid.UUID, int]],
        params: FetchParams,
        max_wait_ms: int,
    ) -> asyncio.Future[list[PartitionFetchResult]]:
        """A fetch that found nothing waits until something is acquired for it or `max_wait_ms` passes."""
        done: asyncio.Future[list[PartitionFetchResult]] = asyncio.get_running_loop().create_future()
        op = DelayedShareFetch(max_wait_ms, self, group_id, member_id, list(wanted), params, done)
        keys = []
        for topic_id, partition in wanted:
            info = self.logs.topic_by_id(topic_id)
            if info is not None:
                keys.append((info.name, partition))
        self.purgatory.try_complete_else_watch(op, keys)
        return done

    def wake(self, topic: str, partition: int) -> None:
        """An append (or a release) on the partition: parked share fetches try again."""
        if self.purgatory.pending:
            self.purgatory.check_and_complete((topic, partition))

    # -- sessions --------------------------------------------------------------------------------

    def release_session(
        self, session: ShareSession, partitions: Sequence[tuple[uuid.UUID, int]] | None = None
    ) -> None:
        """The member's records in the session's partitions (or those given) go back to the group."""
        for topic_id, partition in list(session.partitions) if partitions is None else partitions:
            sp = self.partitions.get((session.group_id, topic_id, partition))
            if sp is not None:
                sp.release_member(session.member_id)

    # -- the persister of share groups (S-GRP's SharePersister) ----------------------------------

    def initialize(self, group_id: str, topic_id: uuid.UUID, partition: int, start_offset: int) -> None:
        key = (group_id, topic_id, partition)
        self.state.initialize(ShareStateKey(*key), start_offset)
        sp = self.partitions.get(key)
        if sp is not None:
            sp.reset(start_offset)

    def delete(self, group_id: str, topic_id: uuid.UUID, partition: int) -> None:
        key = (group_id, topic_id, partition)
        sp = self.partitions.pop(key, None)
        if sp is not None:
            sp.cancel_locks()
        self.state.delete(ShareStateKey(*key))

    def close(self) -> None:
        for sp in self.partitions.values():
            sp.cancel_locks()


class DelayedShareFetch(DelayedOperation):
    """A ShareFetch parked until `min_bytes` can be acquired for it, or its max wait passes (then it
    takes what there is)."""

    __slots__ = ("_done", "_group", "_manager", "_member", "_params", "_ready", "_wanted")

    def __init__(
        self,
        delay_ms: int,
        manager: ShareManager,
        group_id: str,
        member_id: str,
        wanted: list[tuple[uuid.UUID, int]],
        params: FetchParams,
        done: asyncio.Future[list[PartitionFetchResult]],
    ) -> None:
        super().__init__(delay_ms)
        self._manager = manager
        self._group = group_id
        self._member = member_id
        self._wanted = wanted
        self._params = params
        self._done = done
        self._ready: list[PartitionFetchResult] | None = None

    def try_complete(self) -> bool:
        if self._done.done():
            return self.force_complete()
        if not self._manager.enough_bytes(self._group, self._wanted, self._params):
            return False
        results = self._manager.fetch_now(self._group, self._member, self._wanted, self._params)
        if any(r.ranges or r.error for r in results):
            self._ready = results
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        if self._ready is None and self._params.min_bytes > 1 and not self._done.done():
            # The max wait passed short of min_bytes: the fetch takes what there is, as Kafka's does.
            # (With min_bytes 1 there is nothing: anything acquirable would have completed it.)
            self._ready = self._manager.fetch_now(self._group, self._member, self._wanted, self._params)
        results = self._ready
        if results is None:
            results = [PartitionFetchResult(t, p) for t, p in self._wanted]
        if not self._done.done():
            self._done.set_result(results)
        elif self._ready is not None:
            # The request went away (connection closed) after records were acquired: give them back.
            for topic_id, partition in self._wanted:
                sp = self._manager.partitions.get((self._group, topic_id, partition))
                if sp is not None:
                    sp.release_member(self._member)

    def on_expiration(self) -> None:
        pass
