"""A group member's session timeout as the coordinator holds it, and what `expire_member` says when the
member outlives it.

A classic member's session timeout is the one its JoinGroup asked for (`session.timeout.ms`); a
consumer group (KIP-848) member's is the group's `group.consumer.session.timeout.ms` (its GROUP config,
else the broker's), except for a classic member of a consumer group, which keeps its JoinGroup's.
Everything here runs on the broker's loop (`KafkitoHandle.call`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkito.broker.coordinator import GroupCoordinator


@dataclass(frozen=True, slots=True)
class MemberSession:
    """A member's session timeout and where it comes from (the config a user would change)."""

    group_type: str  # "classic" or "consumer"
    session_timeout_ms: int
    source: str  # "session.timeout.ms of its JoinGroup" or "group.consumer.session.timeout.ms"


def member_session(coordinator: GroupCoordinator, group_id: str, member_id: str) -> MemberSession:
    """The member's session timeout; ValueError naming the members there when it is not a member."""
    classic = coordinator.get_group(group_id)
    if classic is not None:
        for member in classic.members():
            if member.member_id == member_id:
                return MemberSession(
                    "classic", member.session_timeout_ms, "session.timeout.ms of its JoinGroup"
                )
        raise ValueError(_not_a_member(group_id, member_id, [m.member_id for m in classic.members()]))
    consumer = coordinator.get_consumer_group(group_id)
    if consumer is None:
        raise ValueError(f"there is no group {group_id!r}")
    found = consumer.members.get(member_id)
    if found is None:
        raise ValueError(_not_a_member(group_id, member_id, list(consumer.members)))
    if found.classic_member is not None:
        timeout = found.classic_member.session_timeout_ms
        return MemberSession("consumer", timeout, "session.timeout.ms of its JoinGroup")
    timeout = coordinator.group_configs.session_timeout_ms(group_id)
    return MemberSession("consumer", timeout, "group.consumer.session.timeout.ms")


def _not_a_member(group_id: str, member_id: str, members: list[str]) -> str:
    present = ", ".join(repr(m) for m in members) or "none"
    return f"{member_id!r} is not a member of group {group_id!r} (members: {present})"


def still_there(
    group_id: str,
    member_id: str,
    session: MemberSession,
    advanced_ms: int,
    timeout: float,
    seen: dict[str, Any],
) -> str:
    """The error of an `expire_member` whose member is still in the group after the wait."""
    return (
        f"member {member_id!r} of group {group_id!r} is still in the group: its session timeout is "
        f"{session.session_timeout_ms} ms ({session.source}), the broker clock was advanced "
        f"{advanced_ms} ms, past it, and the test waited {timeout} s for the member to be removed; the "
        f"group is {seen['state']} with {len(seen['members'])} members (generation "
        f"{seen.get('generation')}). A member that is kept alive (parked in a JoinGroup or SyncGroup "
        "of a rebalance in progress) or that heartbeated since is not expired"
    )
