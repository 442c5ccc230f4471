"""The sans-io classic group coordinator: Kafka's GroupCoordinator driven by method calls and a clock."""

from __future__ import annotations

import dataclasses
import functools
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

import structlog

from broker.coordinator.config import CoordinatorConfig
from broker.coordinator.delayed import (
    DelayedHeartbeat,
    DelayedJoin,
    DelayedSync,
    InitialDelayedJoin,
    join_key,
    member_key,
    sync_key,
)
from broker.coordinator.group import Group, GroupState, IllegalGroupStateError
from broker.coordinator.member import Member
from broker.coordinator.offsets import OffsetCommits, fetch_offsets, group_store_error
from broker.coordinator.results import (
    DEAD_GROUP_SUMMARY,
    EMPTY_GROUP_SUMMARY,
    UNKNOWN_MEMBER_ID,
    CommitCallback,
    DescribedGroup,
    GroupOverview,
    GroupSummary,
    JoinCallback,
    JoinGroupResult,
    LeaveGroupResult,
    LeaveMemberResult,
    LeavingMember,
    OffsetAndMetadata,
    PartitionOffset,
    SyncCallback,
    SyncGroupResult,
    TopicPartition,
)
from broker.coordinator.store import GroupStore, InMemoryGroupStore, StoreCallback
from protocol.errors import ErrorCode
from purgatory import Clock, Purgatory, Timer

log = structlog.get_logger("kafkito.coordinator")

P = ParamSpec("P")
R = TypeVar("R")

_REBALANCING_OR_DONE = (GroupState.DEAD, GroupState.EMPTY, GroupState.PREPARING_REBALANCE)
_AFTER_JOIN = (GroupState.COMPLETING_REBALANCE, GroupState.STABLE)


def _entry(
    method: Callable[Concatenate[GroupCoordinator, P], R],
) -> Callable[Concatenate[GroupCoordinator, P], R]:
    """Mark a way into the coordinator: callbacks queued inside run when the outermost entry returns."""

    @functools.wraps(method)
    def wrapper(self: GroupCoordinator, *args: P.args, **kwargs: P.kwargs) -> R:
        self._depth += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            self._depth -= 1
            if self._depth == 0 and self._outbox:
                self._flush()

    return wrapper


class GroupCoordinator:
    """Classic consumer groups: membership, rebalances, liveness and offsets, as Kafka 3.x does them.

    Results of JoinGroup, SyncGroup and OffsetCommit go to callbacks: at once for immediate answers,
    later for parked requests (when their delayed operation completes or the store answers).
    Callbacks never run while the coordinator is mid-change: they are queued and delivered, in
    order, when the outermost call into the coordinator returns.
    """

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

    @_entry
    def load_group(self, group: Group) -> Group:
        """Install a group read back from the store (Stable if it has members, else Empty); arm deadlines."""
        if group.state not in (GroupState.STABLE, GroupState.EMPTY):
            raise IllegalGroupStateError(f"group {group.group_id} cannot load in state {group.state}")
        group = self._add_group(group)
        log.info(
            "group.loaded",
            group=group.group_id,
            state=group.state.value,
            generation=group.generation_id,
            members=group.member_ids(),
        )
        if group.size > self.config.group_max_size:
            self._prepare_rebalance(group, f"loaded group is over capacity ({self.config.group_max_size})")
        for member in group.members():
            self._complete_and_schedule_next_heartbeat(group, member)
        return group

    @_entry
    def unload_group(self, group_id: str) -> None:
        """Forget a group whose partition moved away: it goes Dead and parked requests get NOT_COORDINATOR."""
        group = self._groups.pop(group_id, None)
        if group is None:
            return
        previous = group.state
        self._transition(group, GroupState.DEAD, "unloaded")
        if previous is GroupState.PREPARING_REBALANCE:
            for member in group.members():
                self._reply_join(group, member, JoinGroupResult(member.member_id, ErrorCode.NOT_COORDINATOR))
            self.rebalance_purgatory.check_and_complete(join_key(group_id))
        elif previous in _AFTER_JOIN:
            for member in group.members():
                self._reply_sync(member, SyncGroupResult(ErrorCode.NOT_COORDINATOR))
                self.heartbeat_purgatory.check_and_complete(member_key(group_id, member.member_id))
        self._remove_sync_expiration(group)

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

    # -- JoinGroup ------------------------------------------------------------------------------

    @_entry
    def join_group(
        self,
        group_id: str | None,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Sequence[tuple[str, bytes]],
        callback: JoinCallback,
        *,
        api_version: int = 9,
        reason: str | None = None,
    ) -> None:
        """JoinGroup of version `api_version` (v0 uses the session timeout as rebalance timeout)."""
        error = self._validate_group_status(group_id, allow_empty_id=False)
        if error is not None:
            self._send(callback, JoinGroupResult(member_id, error))
            return
        assert group_id is not None
        if not (
            self.config.group_min_session_timeout_ms
            <= session_timeout_ms
            <= self.config.group_max_session_timeout_ms
        ):
            self._send(callback, JoinGroupResult(member_id, ErrorCode.INVALID_SESSION_TIMEOUT))
            return
        if api_version == 0:
            rebalance_timeout_ms = session_timeout_ms
        is_unknown = member_id == UNKNOWN_MEMBER_ID
        group = self._groups.get(group_id)
        if group is None:
            if not is_unknown:
                self._send(callback, JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))
                return
            group = self._add_group(Group(group_id, self.clock.now_ms()))
        join = _Join(
            member_id,
            group_instance_id,
            client_id,
            client_host,
            rebalance_timeout_ms,
            session_timeout_ms,
            protocol_type,
            list(protocols),
            callback,
            api_version,
            reason or "not provided",
        )
        if not self._accept_joining_member(group, member_id):
            group.remove(member_id)
            log.info(
                "member.rejected_group_full", group=group_id, member=member_id, max=self.config.group_max_size
            )
            self._send(callback, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.GROUP_MAX_SIZE_REACHED))
        elif is_unknown:
            self._join_new_member(group, join)
        else:
            self._join_current_member(group, join)
        if group.is_(GroupState.PREPARING_REBALANCE):
            self.rebalance_purgatory.check_and_complete(join_key(group_id))

    def _accept_joining_member(self, group: Group, member_id: str) -> bool:
        state = group.state
        if state in (GroupState.EMPTY, GroupState.DEAD):
            return True
        max_size = self.config.group_max_size
        if state is GroupState.PREPARING_REBALANCE:
            # Counting those already waiting (not the size) sheds the last members to rejoin.
            return (group.has(member_id) and group.get(member_id).is_awaiting_join) or (
                group.num_awaiting_join < max_size
            )
        return group.has(member_id) or group.size < max_size

    def _join_new_member(self, group: Group, join: _Join) -> None:
        if group.is_(GroupState.DEAD):
            self._send(join.callback, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(join.protocol_type, (name for name, _ in join.protocols)):
            self._send(
                join.callback, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
            )
            return
        new_member_id = Group.generate_member_id(join.client_id, join.group_instance_id)
        if join.group_instance_id is not None:
            old_member_id = group.static_member_id(join.group_instance_id)
            if old_member_id is not None:
                self._replace_static_member(group, join, join.group_instance_id, old_member_id, new_member_id)
            else:
                self._add_member_and_rebalance(group, join, new_member_id)
        elif join.api_version >= 4:
            # KIP-394: hand out the id and wait for a second JoinGroup that uses it.
            group.add_pending_member(new_member_id)
            log.info("member.pending", group=group.group_id, member=new_member_id, state=group.state.value)
            self.heartbeat_purgatory.try_complete_else_watch(
                DelayedHeartbeat(self, group, new_member_id, True, join.session_timeout_ms),
                (member_key(group.group_id, new_member_id),),
            )
            self._send(join.callback, JoinGroupResult(new_member_id, ErrorCode.MEMBER_ID_REQUIRED))
        else:
            self._add_member_and_rebalance(group, join, new_member_id)

    def _join_current_member(self, group: Group, join: _Join) -> None:
        member_id = join.member_id
        if group.is_(GroupState.DEAD):
            self._send(join.callback, JoinGroupResult(member_id, ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(join.protocol_type, (name for name, _ in join.protocols)):
            self._send(join.callback, JoinGroupResult(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        if group.is_pending_member(member_id):
            if join.group_instance_id is not None:
                # Kafka throws here (a pending id is never static): the client sees UNKNOWN_SERVER_ERROR.
                self._send(join.callback, JoinGroupResult(member_id, ErrorCode.UNKNOWN_SERVER_ERROR))
                return
            self._add_member_and_rebalance(group, join, member_id)
            return
        error = self._validate_current_member(group, member_id, join.group_instance_id)
        if error is not None:
            self._send(join.callback, JoinGroupResult(member_id, error))
            return
        member = group.get(member_id)
        state = group.state
        if state is GroupState.PREPARING_REBALANCE:
            self._update_member_and_rebalance(
                group,
                member,
                join,
                f"member {member_id} joining during PreparingRebalance; reason: {join.reason}",
            )
        elif state is GroupState.COMPLETING_REBALANCE:
            if member.matches(join.protocols):
                # Probably a retry after a lost JoinGroup response: answer with the current generation.
                self._send(join.callback, self._join_result(group, member_id))
            else:
                self._update_member_and_rebalance(
                    group,
                    member,
                    join,
                    f"member {member_id} changed metadata during CompletingRebalance; reason: {join.reason}",
                )
        elif state is GroupState.STABLE:
            if group.is_leader(member_id):
                # Lets the leader trigger a rebalance for changes outside member metadata (new partitions).
                self._update_member_and_rebalance(
                    group, member, join, f"leader {member_id} rejoining during Stable; reason: {join.reason}"
                )
            elif not member.matches(join.protocols):
                self._update_member_and_rebalance(
                    group,
                    member,
                    join,
                    f"member {member_id} changed metadata during Stable; reason: {join.reason}",
                )
            else:
                self._send(join.callback, self._join_result(group, member_id, with_members=False))
        else:
            self._send(join.callback, JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))

    def _join_result(
        self,
        group: Group,
        member_id: str,
        *,
        with_members: bool = True,
        leader_id: str | None = None,
        skip_assignment: bool = False,
    ) -> JoinGroupResult:
        is_leader = group.is_leader(member_id)
        return JoinGroupResult(
            member_id=member_id,
            error=ErrorCode.NONE,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader_id=(group.leader_id or "") if leader_id is None else leader_id,
            skip_assignment=skip_assignment,
            members=group.current_member_metadata() if with_members and is_leader else (),
        )

    def _add_member_and_rebalance(self, group: Group, join: _Join, member_id: str) -> None:
        member = Member(
            member_id,
            join.group_instance_id,
            join.client_id,
            join.client_host,
            join.rebalance_timeout_ms,
            join.session_timeout_ms,
            join.protocol_type,
            join.protocols,
            join_callback=join.callback,
            is_new=True,
        )
        if group.is_(GroupState.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member)
        log.info(
            "member.added",
            group=group.group_id,
            member=member_id,
            instance=join.group_instance_id,
            client_id=join.client_id,
            client_host=join.client_host,
            session_timeout_ms=join.session_timeout_ms,
            rebalance_timeout_ms=join.rebalance_timeout_ms,
            protocols=[name for name, _ in join.protocols],
        )
        # A new member cannot heartbeat (no id yet) and its muted socket hides a disconnect, so its
        # parked JoinGroup gets its own deadline; if it is still around later it will retry.
        self._complete_and_schedule_next_expiration(group, member, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance(
            group,
            f"adding new member {member_id} with group instance id {join.group_instance_id}; "
            f"reason: {join.reason}",
        )

    def _update_member_and_rebalance(self, group: Group, member: Member, join: _Join, reason: str) -> None:
        # Kafka drops a superseded parked JoinGroup unanswered; answering lets no request hang.
        self._reply_join(group, member, JoinGroupResult(member.member_id, ErrorCode.REBALANCE_IN_PROGRESS))
        group.update_member(
            member, join.protocols, join.rebalance_timeout_ms, join.session_timeout_ms, join.callback
        )
        self._maybe_prepare_rebalance(group, reason)

    def _replace_static_member(
        self, group: Group, join: _Join, instance_id: str, old_member_id: str, new_member_id: str
    ) -> None:
        current_leader = group.leader_id or ""
        old = group.get(old_member_id)
        # Fence whoever still waits under the old id right away.
        self._reply_join(group, old, JoinGroupResult(old_member_id, ErrorCode.FENCED_INSTANCE_ID))
        self._reply_sync(old, SyncGroupResult(ErrorCode.FENCED_INSTANCE_ID))
        member = group.replace_static_member(instance_id, old_member_id, new_member_id)
        log.info(
            "member.static_replaced",
            group=group.group_id,
            instance=instance_id,
            old_member=old_member_id,
            member=new_member_id,
            state=group.state.value,
            generation=group.generation_id,
        )
        # The old id's heartbeat deadline expires harmlessly: that id is no longer in the group.
        self._complete_and_schedule_next_heartbeat(group, member)
        old_protocols = member.protocols
        old_rebalance_timeout, old_session_timeout = member.rebalance_timeout_ms, member.session_timeout_ms
        group.update_member(
            member, join.protocols, join.rebalance_timeout_ms, join.session_timeout_ms, join.callback
        )
        state = group.state
        if state is GroupState.STABLE:
            if group.protocol_name != group.select_protocol():
                self._maybe_prepare_rebalance(
                    group,
                    f"static member {instance_id} rejoined with a change of protocol; reason: {join.reason}",
                )
                return
            assignment = {m.member_id: m.assignment for m in group.members()}
            skip_ok = join.api_version >= 9

            def on_stored(append_error: ErrorCode) -> None:
                if append_error is not ErrorCode.NONE:
                    error = group_store_error(append_error)
                    log.warning(
                        "member.static_replacement_reverted",
                        group=group.group_id,
                        instance=instance_id,
                        member=new_member_id,
                        error=error.name,
                    )
                    group.update_member(
                        member, old_protocols, old_rebalance_timeout, old_session_timeout, None
                    )
                    restored = group.replace_static_member(instance_id, new_member_id, old_member_id)
                    self._complete_and_schedule_next_heartbeat(group, restored)
                    self._send(
                        join.callback,
                        JoinGroupResult(
                            UNKNOWN_MEMBER_ID,
                            error,
                            group.generation_id,
                            group.protocol_type,
                            group.protocol_name,
                            current_leader,
                        ),
                    )
                elif skip_ok:
                    # v9+: a static leader is told it leads but must not run the assignor again.
                    is_leader = group.is_leader(new_member_id)
                    self._reply_join(
                        group,
                        member,
                        self._join_result(
                            group,
                            new_member_id,
                            skip_assignment=is_leader,
                        ),
                    )
                else:
                    # Before v9: name the old leader id so the new id does not believe it leads and
                    # computes an assignment a Stable group would never hand out.
                    self._reply_join(
                        group,
                        member,
                        self._join_result(
                            group,
                            new_member_id,
                            with_members=False,
                            leader_id=current_leader,
                        ),
                    )

            self.store.store_group(group, assignment, self._guard(on_stored))
        elif state is GroupState.COMPLETING_REBALANCE:
            # The leader may already be assigning to the old id: start over.
            self._prepare_rebalance(
                group,
                f"static member {instance_id} replaced during CompletingRebalance; reason: {join.reason}",
            )
        elif state is not GroupState.PREPARING_REBALANCE:
            raise IllegalGroupStateError(
                f"static member {instance_id} rejoined group {group.group_id} in {state}"
            )

    # -- rebalance engine -----------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        rebalance_timeout = group.rebalance_timeout_ms()
        op: DelayedJoin
        if group.is_(GroupState.EMPTY):
            delay = self.config.group_initial_rebalance_delay_ms
            op = InitialDelayedJoin(self, group, delay, delay, max(rebalance_timeout - delay, 0))
        else:
            op = DelayedJoin(self, group, rebalance_timeout)
        self._transition(group, GroupState.PREPARING_REBALANCE, reason)
        self.rebalance_purgatory.try_complete_else_watch(op, (join_key(group.group_id),))

    def _try_complete_join(self, group: Group, force_complete: Callable[[], bool]) -> bool:
        if group.has_all_members_joined():
            return force_complete()
        return False

    @_entry
    def _on_complete_initial_join(self, op: InitialDelayedJoin) -> None:
        group = op.group
        if group.new_member_added and op.remaining_ms != 0:
            group.new_member_added = False
            delay = min(op.configured_delay_ms, op.remaining_ms)
            remaining = max(op.remaining_ms - op.initial_delay_ms, 0)
            log.info(
                "group.initial_delay_extended",
                group=group.group_id,
                delay_ms=delay,
                remaining_ms=remaining,
                members=group.member_ids(),
            )
            self.rebalance_purgatory.try_complete_else_watch(
                InitialDelayedJoin(self, group, op.configured_delay_ms, delay, remaining),
                (join_key(group.group_id),),
            )
        else:
            self._on_complete_join(group)

    @_entry
    def _on_complete_join(self, group: Group) -> None:
        dropped = [m for m in group.not_yet_rejoined() if not m.is_static]
        for member in dropped:
            self._drop_member(group, member)
        if dropped:
            log.info(
                "group.members_not_rejoined",
                group=group.group_id,
                removed=[m.member_id for m in dropped],
                generation=group.generation_id,
            )
        if group.is_(GroupState.DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.size > 0:
            # Only static members are left and none rejoined: wait again until they do or time out.
            log.warning(
                "group.rebalance_rescheduled",
                group=group.group_id,
                generation=group.generation_id,
                members=group.member_ids(),
                reason="no member rejoined",
            )
            self.rebalance_purgatory.try_complete_else_watch(
                DelayedJoin(self, group, group.rebalance_timeout_ms()), (join_key(group.group_id),)
            )
            return
        previous = group.state
        group.init_next_generation(self.clock.now_ms())
        self._log_transition(group, previous, "join phase completed")
        if group.is_(GroupState.EMPTY):

            def on_stored(append_error: ErrorCode) -> None:
                if append_error is not ErrorCode.NONE:
                    # Harmless: an empty generation has no members that could be misled.
                    log.warning("group.empty_store_failed", group=group.group_id, error=append_error.name)

            self.store.store_group(group, {}, self._guard(on_stored))
            return
        for member in group.members():
            self._reply_join(group, member, self._join_result(group, member.member_id))
            self._complete_and_schedule_next_heartbeat(group, member)
            member.is_new = False
            group.add_pending_sync_member(member.member_id)
        self.rebalance_purgatory.try_complete_else_watch(
            DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms()),
            (sync_key(group.group_id),),
        )

    def _try_complete_pending_sync(
        self, group: Group, generation_id: int, force_complete: Callable[[], bool]
    ) -> bool:
        if generation_id != group.generation_id or group.state in _REBALANCING_OR_DONE:
            return force_complete()
        if group.has_received_sync_from_all_members():
            return force_complete()
        return False

    @_entry
    def _on_expire_pending_sync(self, group: Group, generation_id: int) -> None:
        if generation_id != group.generation_id or group.state not in _AFTER_JOIN:
            return
        pending = group.pending_sync_members()
        if not pending:
            return
        for member_id in pending:
            if group.has(member_id):
                self._drop_member(group, group.get(member_id))
        log.info(
            "group.members_not_synced",
            group=group.group_id,
            removed=sorted(pending),
            generation=generation_id,
        )
        self._prepare_rebalance(group, f"removing {sorted(pending)} on pending sync expiration")

    def _drop_member(self, group: Group, member: Member) -> None:
        """Remove a member with no rebalance of its own; anything it had parked is answered first."""
        self._reply_join(group, member, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
        self._reply_sync(member, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))

    def _remove_member_and_update_group(self, group: Group, member: Member, reason: str) -> None:
        # A timed-out new member may still have its JoinGroup parked: UNKNOWN_MEMBER_ID makes it retry.
        self._reply_join(group, member, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
        # Kafka leaves a parked SyncGroup of a removed member unanswered; answering lets no request hang.
        self._reply_sync(member, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        log.info(
            "member.removed",
            group=group.group_id,
            member=member.member_id,
            instance=member.group_instance_id,
            generation=group.generation_id,
            reason=reason,
        )
        state = group.state
        if state in _AFTER_JOIN:
            self._maybe_prepare_rebalance(group, reason)
        elif state is GroupState.PREPARING_REBALANCE:
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def _remove_pending_member_and_update_group(self, group: Group, member_id: str) -> None:
        group.remove(member_id)
        if group.is_(GroupState.PREPARING_REBALANCE):
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def _remove_sync_expiration(self, group: Group) -> None:
        group.clear_pending_sync_members()
        self.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def _remove_pending_sync_member(self, group: Group, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        self.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def _reset_and_propagate_assignment_error(self, group: Group, error: ErrorCode) -> None:
        for member in group.members():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _set_and_propagate_assignment(self, group: Group, assignment: Mapping[str, bytes]) -> None:
        for member in group.members():
            member.assignment = assignment.get(member.member_id, b"")
        self._propagate_assignment(group, ErrorCode.NONE)

    def _propagate_assignment(self, group: Group, error: ErrorCode) -> None:
        ok = error is ErrorCode.NONE
        protocol_type = group.protocol_type if ok else None
        protocol_name = group.protocol_name if ok else None
        for member in group.members():
            result = SyncGroupResult(error, protocol_type, protocol_name, member.assignment)
            if self._reply_sync(member, result):
                # A deadline that passed while the sync was parked was ignored: start a fresh one.
                self._complete_and_schedule_next_heartbeat(group, member)

    # -- liveness -------------------------------------------------------------------------------

    def _complete_and_schedule_next_heartbeat(self, group: Group, member: Member) -> None:
        self._complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def _complete_and_schedule_next_expiration(self, group: Group, member: Member, timeout_ms: int) -> None:
        key = member_key(group.group_id, member.member_id)
        member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(key)
        member.heartbeat_satisfied = False
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member.member_id, False, timeout_ms), (key,)
        )

    def _try_complete_heartbeat(
        self, group: Group, member_id: str, is_pending: bool, force_complete: Callable[[], bool]
    ) -> bool:
        if group.is_(GroupState.DEAD):
            return force_complete()
        if is_pending:
            return force_complete() if group.has(member_id) else False
        if not group.has(member_id) or group.get(member_id).has_satisfied_heartbeat:
            return force_complete()
        return False

    @_entry
    def _on_expire_heartbeat(self, group: Group, member_id: str, is_pending: bool) -> None:
        if group.is_(GroupState.DEAD):
            return
        if is_pending:
            if group.is_pending_member(member_id):
                log.info("member.pending_expired", group=group.group_id, member=member_id)
            self._remove_pending_member_and_update_group(group, member_id)
            return
        if not group.has(member_id):
            return
        member = group.get(member_id)
        if not member.has_satisfied_heartbeat:
            self._remove_member_and_update_group(
                group, member, f"member {member_id} removed on heartbeat expiration"
            )

    # -- SyncGroup ------------------------------------------------------------------------------

    @_entry
    def sync_group(
        self,
        group_id: str | None,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: Mapping[str, bytes],
        callback: SyncCallback,
    ) -> None:
        """SyncGroup; `protocol_type`/`protocol_name` are None before v5 (not checked)."""
        error = self._validate_group_status(group_id, allow_empty_id=False)
        if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            # The rebalance state is lost while loading; older clients do not expect error 14 here.
            self._send(callback, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
            return
        if error is not None:
            self._send(callback, SyncGroupResult(error))
            return
        assert group_id is not None
        group = self._groups.get(group_id)
        if group is None:
            self._send(callback, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
            return
        error = self._validate_sync(
            group, generation_id, member_id, group_instance_id, protocol_type, protocol_name
        )
        if error is not None:
            self._send(callback, SyncGroupResult(error))
            return
        state = group.state
        if state is GroupState.EMPTY:
            self._send(callback, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        elif state is GroupState.PREPARING_REBALANCE:
            self._send(callback, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
        elif state is GroupState.COMPLETING_REBALANCE:
            member = group.get(member_id)
            # A second SyncGroup for the same member replaces the first, which must still get an answer.
            self._reply_sync(member, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
            member.sync_callback = callback
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                self._store_leader_assignment(group, generation_id, member_id, assignments)
        elif state is GroupState.STABLE:
            member = group.get(member_id)
            self._remove_pending_sync_member(group, member_id)
            self._send(
                callback,
                SyncGroupResult(ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment),
            )
            self._complete_and_schedule_next_heartbeat(group, member)
        else:
            raise IllegalGroupStateError(f"SyncGroup reached group {group_id} in {state}")

    def _validate_sync(
        self,
        group: Group,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
    ) -> ErrorCode | None:
        if group.is_(GroupState.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = self._validate_current_member(group, member_id, group_instance_id)
        if error is not None:
            return error
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if protocol_type is not None and protocol_type != group.protocol_type:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and protocol_name != group.protocol_name:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _store_leader_assignment(
        self, group: Group, generation_id: int, leader_id: str, assignments: Mapping[str, bytes]
    ) -> None:
        assignment = {m: assignments.get(m, b"") for m in group.member_ids()}
        missing = [m for m in assignment if m not in assignments]
        log.info(
            "group.assignment_received",
            group=group.group_id,
            generation=generation_id,
            leader=leader_id,
            members=group.size,
            static_members=len(group.static_instance_ids()),
            missing=missing,
        )

        def on_stored(append_error: ErrorCode) -> None:
            # Another member may have joined meanwhile: only the same generation, still completing, counts.
            if not (group.is_(GroupState.COMPLETING_REBALANCE) and generation_id == group.generation_id):
                return
            if append_error is not ErrorCode.NONE:
                error = group_store_error(append_error)
                self._reset_and_propagate_assignment_error(group, error)
                self._maybe_prepare_rebalance(
                    group,
                    f"error {error.name} storing group assignment during SyncGroup (leader {leader_id})",
                )
            else:
                self._set_and_propagate_assignment(group, assignment)
                self._transition(group, GroupState.STABLE, f"assignment of leader {leader_id} stored")

        self.store.store_group(group, assignment, self._guard(on_stored))

    # -- Heartbeat and LeaveGroup ----------------------------------------------------------------

    @_entry
    def heartbeat(
        self, group_id: str | None, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        error = self._validate_group_status(group_id, allow_empty_id=False)
        if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            return ErrorCode.NONE  # the group is loading: answer blindly
        if error is not None:
            return error
        group = self._groups.get(group_id)  # type: ignore[arg-type]
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if group.is_(GroupState.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = self._validate_current_member(group, member_id, group_instance_id)
        if error is not None:
            return error
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        state = group.state
        if state is GroupState.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        self._complete_and_schedule_next_heartbeat(group, group.get(member_id))
        if state is GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    @_entry
    def leave_group(self, group_id: str | None, members: Sequence[LeavingMember]) -> LeaveGroupResult:
        """LeaveGroup (a batch since v3); member_id "" with an instance id removes that static member."""
        error = self._validate_group_status(group_id, allow_empty_id=False)
        if error is not None:
            return LeaveGroupResult(error)
        group = self._groups.get(group_id)  # type: ignore[arg-type]
        if group is None:
            return LeaveGroupResult(
                ErrorCode.NONE,
                tuple(
                    LeaveMemberResult(m.member_id, m.group_instance_id, ErrorCode.UNKNOWN_MEMBER_ID)
                    for m in members
                ),
            )
        if group.is_(GroupState.DEAD):
            return LeaveGroupResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        results = [
            LeaveMemberResult(m.member_id, m.group_instance_id, self._leave_one(group, m)) for m in members
        ]
        return LeaveGroupResult(ErrorCode.NONE, tuple(results))

    def _leave_one(self, group: Group, leaving: LeavingMember) -> ErrorCode:
        reason = leaving.reason or "not provided"
        if leaving.member_id == UNKNOWN_MEMBER_ID:
            current = (
                group.static_member_id(leaving.group_instance_id)
                if leaving.group_instance_id is not None
                else None
            )
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            self._remove_leaving_member(
                group, current, f"static member removed by LeaveGroup; reason: {reason}"
            )
            return ErrorCode.NONE
        if group.is_pending_member(leaving.member_id):
            log.info("member.pending_left", group=group.group_id, member=leaving.member_id)
            self._remove_pending_member_and_update_group(group, leaving.member_id)
            self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, leaving.member_id))
            return ErrorCode.NONE
        error = self._validate_current_member(group, leaving.member_id, leaving.group_instance_id)
        if error is not None:
            return error
        self._remove_leaving_member(group, leaving.member_id, f"member left by LeaveGroup; reason: {reason}")
        return ErrorCode.NONE

    def _remove_leaving_member(self, group: Group, member_id: str, reason: str) -> None:
        member = group.get(member_id)
        self._remove_member_and_update_group(group, member, reason)
        self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))

    # -- admin: DescribeGroups, ListGroups, DeleteGroups -------------------------------------------

    @_entry
    def describe_groups(self, group_ids: Iterable[str]) -> list[DescribedGroup]:
        described = []
        for group_id in group_ids:
            error = self._validate_group_status(group_id, allow_empty_id=True)
            if error is not None:
                described.append(DescribedGroup(group_id, error, EMPTY_GROUP_SUMMARY))
                continue
            group = self._groups.get(group_id)
            summary = DEAD_GROUP_SUMMARY if group is None else self._summary(group)
            described.append(DescribedGroup(group_id, ErrorCode.NONE, summary))
        return described

    @staticmethod
    def _summary(group: Group) -> GroupSummary:
        if group.is_(GroupState.STABLE) and group.protocol_name is not None:
            protocol = group.protocol_name
            return GroupSummary(
                group.state.value,
                group.protocol_type or "",
                protocol,
                tuple(m.summary(protocol) for m in group.members()),
            )
        return GroupSummary(
            group.state.value,
            group.protocol_type or "",
            "",
            tuple(m.summary_without_metadata() for m in group.members()),
        )

    @_entry
    def list_groups(
        self, states: Collection[str] = (), types: Collection[str] = ()
    ) -> tuple[ErrorCode, list[GroupOverview]]:
        """Groups whose state and type match the filters (case-insensitive; empty filter = all)."""
        if not self.active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if self.store.is_any_loading() else ErrorCode.NONE
        if types and "classic" not in {t.lower() for t in types}:
            return error, []
        wanted = {s.lower() for s in states}
        overviews = [
            GroupOverview(g.group_id, g.protocol_type or "", g.state.value)
            for g in self._groups.values()
            if not wanted or g.state.value.lower() in wanted
        ]
        return error, overviews

    @_entry
    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        errors: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            error = self._validate_group_status(group_id, allow_empty_id=True)
            if error is not None:
                errors[group_id] = error
                continue
            group = self._groups.get(group_id)
            if group is None or group.is_(GroupState.DEAD):
                errors[group_id] = ErrorCode.GROUP_ID_NOT_FOUND
            elif group.is_(GroupState.EMPTY):
                self._transition(group, GroupState.DEAD, "deleted by DeleteGroups")
                removed = group.remove_offsets(list(group.offsets))
                del self._groups[group_id]
                self.store.write_tombstones(group, list(removed), group.generation_id > 0)
                log.info("group.deleted", group=group_id, offsets_removed=len(removed))
                errors[group_id] = ErrorCode.NONE
            else:
                errors[group_id] = ErrorCode.NON_EMPTY_GROUP
        return errors

    # -- offsets --------------------------------------------------------------------------------

    @_entry
    def commit_offsets(
        self,
        group_id: str | None,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        """OffsetCommit: validates the member and generation, then writes through the store."""
        error = self._validate_group_status(group_id, allow_empty_id=True)
        if error is not None:
            self._send(callback, dict.fromkeys(offsets, error))
            return
        assert group_id is not None
        now = self.clock.now_ms()
        stamped = {
            tp: o if o.commit_timestamp_ms >= 0 else dataclasses.replace(o, commit_timestamp_ms=now)
            for tp, o in offsets.items()
        }
        group = self._groups.get(group_id)
        if group is None:
            if generation_id >= 0:
                # A member of a generation this coordinator never saw: reject.
                self._send(callback, dict.fromkeys(offsets, ErrorCode.ILLEGAL_GENERATION))
                return
            # Not using Kafka for membership (simple consumer or admin client): allow the commit.
            group = self._add_group(Group(group_id, now))
        error = self._validate_offset_commit(group, generation_id, member_id, group_instance_id)
        if error is not None:
            self._send(callback, dict.fromkeys(offsets, error))
            return
        state = group.state
        if state is GroupState.EMPTY:
            self._offsets.store(self.store, group, stamped, callback)
        elif state in (GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            # Allowed while preparing: the heartbeat response tells the member about the rebalance.
            self._complete_and_schedule_next_heartbeat(group, group.get(member_id))
            self._offsets.store(self.store, group, stamped, callback)
        elif state is GroupState.COMPLETING_REBALANCE:
            self._send(callback, dict.fromkeys(offsets, ErrorCode.REBALANCE_IN_PROGRESS))
        else:
            raise IllegalGroupStateError(f"OffsetCommit reached group {group_id} in {state}")

    def _validate_offset_commit(
        self, group: Group, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> ErrorCode | None:
        if group.is_(GroupState.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
            error = self._validate_current_member(group, member_id, group_instance_id)
            if error is not None:
                return error
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
            return None
        if not group.is_(GroupState.EMPTY):
            return ErrorCode.UNKNOWN_MEMBER_ID  # only members commit to a non-empty group
        return None

    @_entry
    def fetch_offsets(
        self,
        group_id: str | None,
        partitions: Sequence[TopicPartition] | None = None,
        require_stable: bool = False,
    ) -> tuple[ErrorCode, dict[TopicPartition, PartitionOffset]]:
        """OffsetFetch of one group (all committed partitions when `partitions` is None)."""
        error = self._validate_group_status(group_id, allow_empty_id=True)
        if error is not None:
            return error, {}
        assert group_id is not None
        return ErrorCode.NONE, fetch_offsets(self._groups.get(group_id), partitions, require_stable)

    @_entry
    def delete_offsets(
        self, group_id: str | None, partitions: Sequence[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: allowed on Empty groups, and on consumer groups for topics nobody subscribes to."""
        error = self._validate_group_status(group_id, allow_empty_id=False)
        if error is not None:
            return error, {}
        assert group_id is not None
        group = self._groups.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        results: dict[TopicPartition, ErrorCode] = {}
        if group.is_(GroupState.EMPTY):
            eligible = list(partitions)
        elif group.is_consumer_group:
            eligible = []
            for tp in partitions:
                if group.is_subscribed_to_topic(tp.topic):
                    results[tp] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    eligible.append(tp)
        else:
            return ErrorCode.NON_EMPTY_GROUP, {}
        if eligible:
            removed = group.remove_offsets(eligible)
            self.store.write_tombstones(group, list(removed), False)
            log.info("group.offsets_deleted", group=group_id, partitions=[list(tp) for tp in eligible])
            for tp in eligible:
                results[tp] = ErrorCode.NONE
        return ErrorCode.NONE, results

    @_entry
    def expire_offsets(self, group_id: str, partitions: Collection[TopicPartition]) -> bool:
        """Drop offsets found expired (`broker.offsets.expiry`); an Empty group left with none goes Dead.

        Tombstones go out for the removed offsets, and for the group record if it ever had a
        generation. Returns True when the group died.
        """
        group = self._groups.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return False
        removed = group.remove_offsets(partitions)
        dead = group.is_(GroupState.EMPTY) and not group.has_offsets()
        if dead:
            self._transition(group, GroupState.DEAD, "no offsets left after expiry")
            del self._groups[group_id]
        if removed or dead:
            self.store.write_tombstones(group, list(removed), dead and group.generation_id > 0)
            log.info("group.offsets_expired", group=group_id, partitions=len(removed), dead=dead)
        return dead


@dataclasses.dataclass(slots=True)
class _Join:
    """One JoinGroup request, as the join paths pass it around."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    callback: JoinCallback
    api_version: int
    reason: str
