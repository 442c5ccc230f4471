"""The coordinator's delayed operations: join, initial join, sync and heartbeat deadlines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkito.purgatory import DelayedOperation

if TYPE_CHECKING:
    from kafkito.broker.coordinator.group import Group
    from kafkito.broker.coordinator.rebalance import RebalanceEngine


def join_key(group_id: str) -> tuple[str, str]:
    return ("join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    return ("sync", group_id)


def member_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("member", group_id, member_id)


class DelayedJoin(DelayedOperation):
    """Completes the join phase once every member rejoined, or at the rebalance timeout."""

    __slots__ = ("coordinator", "group")

    def __init__(self, coordinator: RebalanceEngine, group: Group, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.coordinator = coordinator
        self.group = group

    def try_complete(self) -> bool:
        return self.coordinator._try_complete_join(self.group, self.force_complete)

    def on_complete(self) -> None:
        self.coordinator._on_complete_join(self.group)

    def on_expiration(self) -> None:
        pass


class InitialDelayedJoin(DelayedJoin):
    """The first join phase of an Empty group: waits `delay`, extended while new members arrive."""

    __slots__ = ("configured_delay_ms", "initial_delay_ms", "remaining_ms")

    def __init__(
        self,
        coordinator: RebalanceEngine,
        group: Group,
        configured_delay_ms: int,
        delay_ms: int,
        remaining_ms: int,
    ) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.configured_delay_ms = configured_delay_ms
        self.initial_delay_ms = delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        self.coordinator._on_complete_initial_join(self)


class DelayedSync(DelayedOperation):
    """Removes members that never sent SyncGroup within the rebalance timeout (KAFKA-12890)."""

    __slots__ = ("coordinator", "generation_id", "group")

    def __init__(self, coordinator: RebalanceEngine, group: Group, generation_id: int, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.coordinator = coordinator
        self.group = group
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        return self.coordinator._try_complete_pending_sync(
            self.group, self.generation_id, self.force_complete
        )

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.coordinator._on_expire_pending_sync(self.group, self.generation_id)


class DelayedHeartbeat(DelayedOperation):
    """One member's session deadline; `pending_member` for a KIP-394 member id not yet used to join."""

    __slots__ = ("coordinator", "group", "member_id", "pending_member")

    def __init__(
        self, coordinator: RebalanceEngine, group: Group, member_id: str, is_pending: bool, delay_ms: int
    ) -> None:
        super().__init__(delay_ms)
        self.coordinator = coordinator
        self.group = group
        self.member_id = member_id
        self.pending_member = is_pending

    def try_complete(self) -> bool:
        return self.coordinator._try_complete_heartbeat(
            self.group, self.member_id, self.pending_member, self.force_complete
        )

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.coordinator._on_expire_heartbeat(self.group, self.member_id, self.pending_member)
