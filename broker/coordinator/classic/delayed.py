"""The classic group's delayed operations: join, initial join, sync and heartbeat deadlines.

Each operation keeps its own state (group, generation, member) and asks the rebalance logic through
a narrow public interface (`JoinPhase`, `SyncPhase`, `Sessions`) whether it can complete and what to
do when it completes or expires. The purgatory only sees `DelayedOperation`s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from kafkito.purgatory import DelayedOperation

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.group import ClassicGroup


def join_key(group_id: str) -> tuple[str, str]:
    return ("join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    return ("sync", group_id)


def member_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("member", group_id, member_id)


class JoinPhase(Protocol):
    """What a DelayedJoin needs from the rebalance logic."""

    def all_joined(self, group: ClassicGroup) -> bool:
        """Every member (and no pending member) has sent its JoinGroup: the phase can close."""
        ...

    def complete_join(self, group: ClassicGroup) -> None:
        """Close the join phase: drop who did not rejoin, start the next generation."""
        ...

    def complete_initial_join(self, op: InitialDelayedJoin) -> None:
        """The initial delay ran out: extend it if members keep arriving, else close the phase."""
        ...


class SyncPhase(Protocol):
    """What a DelayedSync needs from the rebalance logic."""

    def sync_settled(self, group: ClassicGroup, generation_id: int) -> bool:
        """Every member synced, or the generation is over: nothing left to expire."""
        ...

    def expire_pending_sync(self, group: ClassicGroup, generation_id: int) -> None:
        """Remove the members that never synced in this generation, and rebalance."""
        ...


class Sessions(Protocol):
    """What a DelayedHeartbeat needs from member liveness."""

    def session_settled(self, group: ClassicGroup, member_id: str, is_pending: bool) -> bool:
        """The deadline has nothing left to guard (the member showed life, left, or the group died)."""
        ...

    def expire_session(self, group: ClassicGroup, member_id: str, is_pending: bool) -> None:
        """The member missed its deadline: remove it."""
        ...


class DelayedJoin(DelayedOperation):
    """Completes the join phase once every member rejoined, or at the rebalance timeout."""

    __slots__ = ("group", "phase")

    def __init__(self, phase: JoinPhase, group: ClassicGroup, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.phase = phase
        self.group = group

    def try_complete(self) -> bool:
        return self.phase.all_joined(self.group) and self.force_complete()

    def on_complete(self) -> None:
        self.phase.complete_join(self.group)

    def on_expiration(self) -> None:
        pass


class InitialDelayedJoin(DelayedJoin):
    """The first join phase of an Empty group: waits `delay`, extended while new members arrive."""

    __slots__ = ("configured_delay_ms", "initial_delay_ms", "remaining_ms")

    def __init__(
        self,
        phase: JoinPhase,
        group: ClassicGroup,
        configured_delay_ms: int,
        delay_ms: int,
        remaining_ms: int,
    ) -> None:
        super().__init__(phase, group, delay_ms)
        self.configured_delay_ms = configured_delay_ms
        self.initial_delay_ms = delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        self.phase.complete_initial_join(self)


class DelayedSync(DelayedOperation):
    """Removes members that never sent SyncGroup within the rebalance timeout (KAFKA-12890)."""

    __slots__ = ("generation_id", "group", "phase")

    def __init__(self, phase: SyncPhase, group: ClassicGroup, generation_id: int, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.phase = phase
        self.group = group
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        return self.phase.sync_settled(self.group, self.generation_id) and self.force_complete()

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.phase.expire_pending_sync(self.group, self.generation_id)


class DelayedHeartbeat(DelayedOperation):
    """One member's session deadline; `pending_member` for a KIP-394 member id not yet used to join."""

    __slots__ = ("group", "member_id", "pending_member", "sessions")

    def __init__(
        self, sessions: Sessions, group: ClassicGroup, member_id: str, is_pending: bool, delay_ms: int
    ) -> None:
        super().__init__(delay_ms)
        self.sessions = sessions
        self.group = group
        self.member_id = member_id
        self.pending_member = is_pending

    def try_complete(self) -> bool:
        return self.sessions.session_settled(self.group, self.member_id, self.pending_member) and (
            self.force_complete()
        )

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.sessions.expire_session(self.group, self.member_id, self.pending_member)
