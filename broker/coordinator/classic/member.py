"""One member of a classic group: its protocols, timeouts, parked requests and liveness flags."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafkito.broker.coordinator.results import JoinCallback, MemberSummary, SyncCallback

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.delayed import DelayedHeartbeat
    from kafkito.broker.coordinator.requests import JoinGroupRequest

Protocols = list[tuple[str, bytes]]


@dataclass(slots=True, eq=False)
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols = field(default_factory=list)
    assignment: bytes = b""
    join_callback: JoinCallback | None = None
    sync_callback: SyncCallback | None = None
    # A member added by a JoinGroup that has not completed yet: it may time out while parked.
    is_new: bool = False
    # Set by any sign of life; the DelayedHeartbeat completes (harmlessly) when it is.
    heartbeat_satisfied: bool = False
    # The member's current session deadline (a DelayedHeartbeat), moved on each heartbeat.
    heartbeat_op: DelayedHeartbeat | None = field(default=None, repr=False)

    @classmethod
    def joining(cls, member_id: str, request: JoinGroupRequest, callback: JoinCallback) -> Member:
        """A new member made from its JoinGroup, parked until the join phase completes."""
        return cls(
            member_id,
            request.group_instance_id,
            request.client_id,
            request.client_host,
            request.rebalance_timeout_ms,
            request.session_timeout_ms,
            request.protocol_type,
            list(request.protocols),
            join_callback=callback,
            is_new=True,
        )

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.join_callback is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.sync_callback is not None

    @property
    def has_satisfied_heartbeat(self) -> bool:
        if self.is_new:
            return self.heartbeat_satisfied
        if self.join_callback is not None or self.sync_callback is not None:
            return True
        return self.heartbeat_satisfied

    def metadata(self, protocol: str) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        raise ValueError(f"member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: Sequence[tuple[str, bytes]]) -> bool:
        """Same protocols, same order, same metadata bytes."""
        if len(protocols) != len(self.protocols):
            return False
        return all(
            a[0] == b[0] and bytes(a[1]) == bytes(b[1])
            for a, b in zip(protocols, self.protocols, strict=True)
        )

    def vote(self, candidates: set[str]) -> str:
        """The first protocol, in this member's order of preference, that every member supports."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def summary(self, protocol: str) -> MemberSummary:
        return MemberSummary(
            self.member_id,
            self.group_instance_id,
            self.client_id,
            self.client_host,
            self.metadata(protocol),
            self.assignment,
        )

    def summary_without_metadata(self) -> MemberSummary:
        return MemberSummary(
            self.member_id, self.group_instance_id, self.client_id, self.client_host, b"", b""
        )
