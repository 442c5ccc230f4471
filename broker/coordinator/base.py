"""The coordinator's shared state and plumbing: the callback outbox, transitions, request validation."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import structlog

from kafkito.broker.coordinator.config import CoordinatorConfig
from kafkito.broker.coordinator.delayed import (
    DelayedHeartbeat,
    DelayedJoin,
    DelayedSync,
)
from kafkito.broker.coordinator.group import Group, GroupState
from kafkito.broker.coordinator.member import Member
from kafkito.broker.coordinator.offsets import OffsetCommits
from kafkito.broker.coordinator.results import (
    JoinGroupResult,
    SyncGroupResult,
)
from kafkito.broker.coordinator.store import GroupStore, InMemoryGroupStore, StoreCallback
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Clock, Purgatory, Timer

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound="CoordinatorBase")

log = structlog.get_logger("kafkito.coordinator")


def entry(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Mark a way into the coordinator: callbacks queued inside run when the outermost entry returns."""

    @functools.wraps(method)
    def wrapper(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
        self._depth += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            self._depth -= 1
            if self._depth == 0 and self._outbox:
                self._flush()

    return wrapper


class CoordinatorBase:
    """Shared state and plumbing of the coordinator layers (see `GroupCoordinator` for the whole)."""

    def __init__(
        self,
        config: CoordinatorConfig,
        clock: Clock,
        timer: Timer,
        store: GroupStore | None = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self.timer = timer
        self.store: GroupStore = store if store is not None else InMemoryGroupStore()
        self.active = True
        self._groups: dict[str, Group] = {}
        self.heartbeat_purgatory: Purgatory[DelayedHeartbeat] = Purgatory("Heartbeat", timer)
        self.rebalance_purgatory: Purgatory[DelayedJoin | DelayedSync] = Purgatory("Rebalance", timer)
        self._outbox: deque[tuple[Callable[[Any], None], Any]] = deque()
        self._depth = 0
        self._flushing = False
        self._offsets = OffsetCommits(config.offset_metadata_max_bytes, self._send, self._guard)

    # -- plumbing -------------------------------------------------------------------------------

    def _send(self, callback: Callable[[R], None], result: R) -> None:
        self._outbox.append((callback, result))

    def _flush(self) -> None:
        if self._flushing:
            return
        self._flushing = True
        try:
            outbox = self._outbox
            while outbox:
                callback, result = outbox.popleft()
                try:
                    callback(result)
                except Exception:
                    log.exception("coordinator.callback_failed", result=repr(result))
        finally:
            self._flushing = False

    def _guard(self, callback: StoreCallback) -> StoreCallback:
        """Wrap a store callback so that, when called later, it is an entry like any request."""

        def guarded(error: ErrorCode) -> None:
            self._depth += 1
            try:
                callback(error)
            finally:
                self._depth -= 1
                if self._depth == 0 and self._outbox:
                    self._flush()

        return guarded

    def _reply_join(self, group: Group, member: Member, result: JoinGroupResult) -> None:
        callback = group.take_join_callback(member)
        if callback is not None:
            self._send(callback, result)

    def _reply_sync(self, member: Member, result: SyncGroupResult) -> bool:
        callback = member.sync_callback
        if callback is None:
            return False
        member.sync_callback = None
        self._send(callback, result)
        return True

    def _transition(self, group: Group, state: GroupState, reason: str) -> None:
        previous = group.state
        group.transition_to(state, self.clock.now_ms())
        self._log_transition(group, previous, reason)

    def _log_transition(self, group: Group, previous: GroupState, reason: str) -> None:
        log.info(
            "group.transition",
            group=group.group_id,
            from_state=previous.value,
            to_state=group.state.value,
            generation=group.generation_id,
            protocol=group.protocol_name,
            leader=group.leader_id,
            members=group.member_ids(),
            reason=reason,
        )

    # -- lifecycle and lookup -------------------------------------------------------------------

    def startup(self) -> None:
        self.active = True

    def shutdown(self) -> None:
        self.active = False

    def get_group(self, group_id: str) -> Group | None:
        return self._groups.get(group_id)

    def groups(self) -> list[Group]:
        return list(self._groups.values())

    def _add_group(self, group: Group) -> Group:
        existing = self._groups.setdefault(group.group_id, group)
        if existing is group:
            log.info("group.created", group=group.group_id, state=group.state.value)
        return existing

    def _validate_group_status(self, group_id: str | None, allow_empty_id: bool) -> ErrorCode | None:
        if group_id is None or (not allow_empty_id and not group_id):
            return ErrorCode.INVALID_GROUP_ID
        if not self.active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if self.store.is_loading(group_id):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        # This broker coordinates every group, so NOT_COORDINATOR never applies here.
        return None

    @staticmethod
    def _validate_current_member(
        group: Group, member_id: str, group_instance_id: str | None
    ) -> ErrorCode | None:
        if group_instance_id is not None:
            current = group.static_member_id(group_instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if current != member_id:
                log.info(
                    "member.fenced",
                    group=group.group_id,
                    member=member_id,
                    instance=group_instance_id,
                    current_member=current,
                )
                return ErrorCode.FENCED_INSTANCE_ID
        if not group.has(member_id):
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None
