"""Consumer group member deadlines on the coordinator's timer: the session timeout (no heartbeat in
time: the member is fenced) and the rebalance timeout (partitions not revoked in time: fenced).

Timers are runtime state, not records: a heartbeat (or a load) arms them again. A firing timer is an
entry of the outbox, like every way into the coordinator.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkito.broker.coordinator.outbox import Outbox
from kafkito.purgatory import Timer
from kafkito.purgatory.timer import TimerTask

Key = tuple[str, str]


class MemberTimers:
    """One session timer and at most one rebalance timer per (group id, member id)."""

    __slots__ = ("_on_rebalance", "_on_session", "_outbox", "_rebalance", "_sessions", "_timer")

    def __init__(
        self,
        timer: Timer,
        outbox: Outbox,
        on_session_expired: Callable[[str, str], None],
        on_rebalance_expired: Callable[[str, str, int], None],
    ) -> None:
        self._timer = timer
        self._outbox = outbox
        self._on_session = on_session_expired
        self._on_rebalance = on_rebalance_expired
        self._sessions: dict[Key, TimerTask] = {}
        self._rebalance: dict[Key, tuple[int, TimerTask]] = {}

    def touch(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        """The member showed life: its session deadline restarts now."""
        key = (group_id, member_id)
        task = self._sessions.get(key)
        if task is not None:
            task.cancel()
        self._sessions[key] = self._timer.schedule(timeout_ms, lambda: self._fire_session(key))

    def arm_rebalance(self, group_id: str, member_id: str, epoch: int, timeout_ms: int) -> None:
        """The member must revoke partitions at `epoch` within `timeout_ms` (kept if already armed)."""
        key = (group_id, member_id)
        armed = self._rebalance.get(key)
        if armed is not None and armed[0] == epoch:
            return
        if armed is not None:
            armed[1].cancel()
        task = self._timer.schedule(timeout_ms, lambda: self._fire_rebalance(key, epoch))
        self._rebalance[key] = (epoch, task)

    def cancel_rebalance(self, group_id: str, member_id: str) -> None:
        armed = self._rebalance.pop((group_id, member_id), None)
        if armed is not None:
            armed[1].cancel()

    def cancel(self, group_id: str, member_id: str) -> None:
        """The member is gone: no deadline left."""
        task = self._sessions.pop((group_id, member_id), None)
        if task is not None:
            task.cancel()
        self.cancel_rebalance(group_id, member_id)

    def cancel_group(self, group_id: str) -> None:
        for key in [k for k in self._sessions if k[0] == group_id]:
            self.cancel(*key)
        for key in [k for k in self._rebalance if k[0] == group_id]:
            self.cancel_rebalance(*key)

    def has_session(self, group_id: str, member_id: str) -> bool:
        return (group_id, member_id) in self._sessions

    def _fire_session(self, key: Key) -> None:
        self._sessions.pop(key, None)
        self._outbox.enter()
        try:
            self._on_session(*key)
        finally:
            self._outbox.leave()

    def _fire_rebalance(self, key: Key, epoch: int) -> None:
        armed = self._rebalance.get(key)
        if armed is not None and armed[0] == epoch:
            del self._rebalance[key]
        self._outbox.enter()
        try:
            self._on_rebalance(key[0], key[1], epoch)
        finally:
            self._outbox.leave()
