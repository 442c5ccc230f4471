"""One classic group: state, generation, members, protocols, leader, and its committed offsets."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

import structlog

from kafkito.broker.coordinator.classic.member import Member
from kafkito.broker.coordinator.classic.state import VALID_PREVIOUS, GroupState, IllegalGroupStateError
from kafkito.broker.coordinator.classic.subscription import subscribed_topics
from kafkito.broker.coordinator.results import (
    UNKNOWN_MEMBER_ID,
    JoinCallback,
    JoinGroupMember,
    OffsetAndMetadata,
    TopicPartition,
)
from kafkito.protocol.errors import ErrorCode

CONSUMER_PROTOCOL_TYPE = "consumer"

log = structlog.get_logger("kafkito.coordinator")


class ClassicGroup:
    """Kafka's ClassicGroup (GroupMetadata before 4.0): data and its invariants; it never calls callbacks."""

    __slots__ = (
        "_leader_id",
        "_members",
        "_num_awaiting_join",
        "_pending_members",
        "_pending_sync_members",
        "_static_members",
        "_supported_protocols",
        "generation_id",
        "group_id",
        "new_member_added",
        "offsets",
        "pending_offset_commits",
        "protocol_name",
        "protocol_type",
        "state",
        "state_timestamp_ms",
        "subscribed_topics",
    )

    def __init__(self, group_id: str, now_ms: int, state: GroupState = GroupState.EMPTY) -> None:
        self.group_id = group_id
        self.state = state
        self.state_timestamp_ms: int | None = now_ms
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self._leader_id: str | None = None
        self._members: dict[str, Member] = {}
        self._static_members: dict[str, str] = {}
        self._pending_members: set[str] = set()
        self._pending_sync_members: set[str] = set()
        self._num_awaiting_join = 0
        self._supported_protocols: dict[str, int] = {}
        self.new_member_added = False
        # None means "unknown": every topic counts as subscribed.
        self.subscribed_topics: set[str] | None = None
        self.offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self.pending_offset_commits: dict[TopicPartition, OffsetAndMetadata] = {}

    def __repr__(self) -> str:
        return (
            f"ClassicGroup({self.group_id!r}, {self.state}, generation={self.generation_id}, "
            f"members={list(self._members)})"
        )

    # -- state --------------------------------------------------------------------------------

    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS[GroupState.PREPARING_REBALANCE]

    def transition_to(self, state: GroupState, now_ms: int) -> None:
        if self.state not in VALID_PREVIOUS[state]:
            raise IllegalGroupStateError(f"group {self.group_id}: illegal transition {self.state} -> {state}")
        self.state = state
        self.state_timestamp_ms = now_ms

    # -- members ------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self._members)

    @property
    def leader_id(self) -> str | None:
        return self._leader_id

    @property
    def num_awaiting_join(self) -> int:
        return self._num_awaiting_join

    def has(self, member_id: str) -> bool:
        return member_id in self._members

    def get(self, member_id: str) -> Member:
        return self._members[member_id]

    def find(self, member_id: str) -> Member | None:
        return self._members.get(member_id)

    def members(self) -> list[Member]:
        return list(self._members.values())

    def member_ids(self) -> list[str]:
        return list(self._members)

    def static_member_id(self, group_instance_id: str) -> str | None:
        return self._static_members.get(group_instance_id)

    def static_instance_ids(self) -> list[str]:
        return list(self._static_members)

    def validate_member(self, member_id: str, group_instance_id: str | None) -> ErrorCode | None:
        """Kafka's validateCurrentMember: the id must be in the group, and own the instance id if given."""
        if group_instance_id is not None:
            current = self._static_members.get(group_instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if current != member_id:
                log.info(
                    "member.fenced",
                    group=self.group_id,
                    member=member_id,
                    instance=group_instance_id,
                    current_member=current,
                )
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in self._members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None

    def validate_offset_commit(
        self, member_id: str, group_instance_id: str | None, generation_id: int, transactional: bool = False
    ) -> ErrorCode | None:
        """Kafka's validateOffsetCommit: who may commit to this group now (None: allowed).

        A member commits with its id and generation, in Stable and PreparingRebalance (its heartbeat
        then tells it about the rebalance), not while the assignment is being completed. Generation -1
        commits to an Empty group whatever member id it names: the group only stores offsets then
        (simple consumers, admin clients, a KIP-848 consumer that assigns its partitions itself and
        names its own member id). A transactional commit (TxnOffsetCommit) is checked only for what it
        names: before v3 it names no member, and it is not held back by a rebalance.
        """
        if self.state is GroupState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and self.state is GroupState.EMPTY:
            return None  # from outside the group's membership, as Kafka's check allows first
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
            error = self.validate_member(member_id, group_instance_id)
            if error is None and generation_id != self.generation_id:
                error = ErrorCode.ILLEGAL_GENERATION
            if error is None and not transactional and self.state is GroupState.COMPLETING_REBALANCE:
                error = ErrorCode.REBALANCE_IN_PROGRESS
            return error
        # No member named, and the group is not Empty: only a transactional commit may (it names none
        # before v3); a plain commit must come from a member.
        return None if transactional else ErrorCode.UNKNOWN_MEMBER_ID

    def is_leader(self, member_id: str) -> bool:
        return self._leader_id == member_id

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self._members.values()), default=0)

    @staticmethod
    def generate_member_id(client_id: str, group_instance_id: str | None) -> str:
        prefix = group_instance_id if group_instance_id is not None else client_id
        return f"{prefix}-{uuid.uuid4()}"

    def add(self, member: Member) -> None:
        """Add a member (its join callback, if any, already set on it)."""
        if member.group_instance_id is not None:
            if member.group_instance_id in self._static_members:
                raise IllegalGroupStateError(
                    f"static member {member.group_instance_id} is already in group {self.group_id}"
                )
            self._static_members[member.group_instance_id] = member.member_id
        if not self._members:
            self.protocol_type = member.protocol_type
        if self._leader_id is None:
            self._leader_id = member.member_id
        self._members[member.member_id] = member
        self._inc_protocols(member)
        if member.is_awaiting_join:
            self._num_awaiting_join += 1
        self._pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        member = self._members.pop(member_id, None)
        if member is not None:
            self._dec_protocols(member)
            if member.is_awaiting_join:
                self._num_awaiting_join -= 1
            if member.group_instance_id is not None:
                self._static_members.pop(member.group_instance_id, None)
        if self._leader_id == member_id:
            self._leader_id = next(iter(self._members), None)
        self._pending_members.discard(member_id)
        self._pending_sync_members.discard(member_id)
        return member

    def update_member(
        self,
        member: Member,
        protocols: Sequence[tuple[str, bytes]],
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        join_callback: JoinCallback | None,
    ) -> None:
        """Replace a member's protocols and timeouts and (un)park its join; `join_callback` may be None."""
        self._dec_protocols(member)
        member.protocols = list(protocols)
        self._inc_protocols(member)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if join_callback is not None and not member.is_awaiting_join:
            self._num_awaiting_join += 1
        elif join_callback is None and member.is_awaiting_join:
            self._num_awaiting_join -= 1
        member.join_callback = join_callback

    def take_join_callback(self, member: Member) -> JoinCallback | None:
        """Unpark a member's join and hand its callback to the caller (who answers it)."""
        callback = member.join_callback
        if callback is not None:
            member.join_callback = None
            self._num_awaiting_join -= 1
        return callback

    def replace_static_member(self, group_instance_id: str, old_member_id: str, new_member_id: str) -> Member:
        """Give a static member a new member id, keeping assignment and leadership.

        The caller must have answered the old id's parked requests first.
        """
        member = self._members.pop(old_member_id, None)
        if member is None:
            raise IllegalGroupStateError(f"cannot replace unknown member {old_member_id}")
        member.member_id = new_member_id
        self._members[new_member_id] = member
        if self._leader_id == old_member_id:
            self._leader_id = new_member_id
        # Not in Kafka, which leaves the old id pending and rebalances when DelayedSync expires.
        if old_member_id in self._pending_sync_members:
            self._pending_sync_members.discard(old_member_id)
            self._pending_sync_members.add(new_member_id)
        self._static_members[group_instance_id] = new_member_id
        return member

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep a leader that rejoined, else pick any member that did; False if nobody did (or no leader)."""
        if self._leader_id is None:
            return False
        leader = self._members[self._leader_id]
        if leader.is_awaiting_join:
            return True
        for member_id, member in self._members.items():
            if member.is_awaiting_join:
                self._leader_id = member_id
                return True
        return False

    def not_yet_rejoined(self) -> list[Member]:
        return [m for m in self._members.values() if not m.is_awaiting_join]

    def has_all_members_joined(self) -> bool:
        return len(self._members) == self._num_awaiting_join and not self._pending_members

    # -- pending (KIP-394) and pending-sync members ---------------------------------------------

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self._pending_members

    def add_pending_member(self, member_id: str) -> None:
        if member_id in self._members:
            raise IllegalGroupStateError(f"pending member {member_id} is already a member")
        self._pending_members.add(member_id)

    def add_pending_sync_member(self, member_id: str) -> None:
        if member_id not in self._members:
            raise IllegalGroupStateError(f"pending sync for unknown member {member_id}")
        self._pending_sync_members.add(member_id)

    def remove_pending_sync_member(self, member_id: str) -> None:
        self._pending_sync_members.discard(member_id)

    def has_received_sync_from_all_members(self) -> bool:
        return not self._pending_sync_members

    def pending_sync_members(self) -> set[str]:
        return set(self._pending_sync_members)

    def clear_pending_sync_members(self) -> None:
        self._pending_sync_members.clear()

    # -- protocols ------------------------------------------------------------------------------

    def _inc_protocols(self, member: Member) -> None:
        # Each name once per member: a JoinGroup naming a protocol twice must not count as two members
        # (the name would then match no member count, leaving no candidate protocol to vote for).
        counts = self._supported_protocols
        for name in {name for name, _ in member.protocols}:
            counts[name] = counts.get(name, 0) + 1

    def _dec_protocols(self, member: Member) -> None:
        counts = self._supported_protocols
        for name in {name for name, _ in member.protocols}:
            left = counts.get(name, 0) - 1
            if left > 0:
                counts[name] = left
            else:
                counts.pop(name, None)

    def candidate_protocols(self) -> set[str]:
        n = len(self._members)
        return {name for name, count in self._supported_protocols.items() if count == n}

    def supports_protocols(self, protocol_type: str, protocols: Iterable[str]) -> bool:
        names = set(protocols)
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(names)
        n = len(self._members)
        return self.protocol_type == protocol_type and any(
            self._supported_protocols.get(name, 0) == n for name in names
        )

    def select_protocol(self) -> str:
        """Each member votes for its preferred common protocol; most votes wins, ties to the earliest vote."""
        if not self._members:
            raise IllegalGroupStateError(f"cannot select a protocol for empty group {self.group_id}")
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self._members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=lambda name: votes[name])

    def current_member_metadata(self) -> tuple[JoinGroupMember, ...]:
        if self.state in (GroupState.DEAD, GroupState.PREPARING_REBALANCE) or self.protocol_name is None:
            raise IllegalGroupStateError(f"no member metadata for group {self.group_id} in {self.state}")
        protocol = self.protocol_name
        return tuple(
            JoinGroupMember(m.member_id, m.group_instance_id, m.metadata(protocol))
            for m in self._members.values()
        )

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self._members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.EMPTY, now_ms)
        self._pending_sync_members.clear()

    # -- offsets ---------------------------------------------------------------------------------

    @property
    def is_consumer_group(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def compute_subscribed_topics(self) -> set[str] | None:
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self._members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self._members.values():
            parsed = subscribed_topics(member.metadata(self.protocol_name))
            if parsed is None:
                return None
            topics |= parsed
        return topics

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return self.subscribed_topics is None or topic in self.subscribed_topics

    def has_pending_offset_commit(self, tp: TopicPartition) -> bool:
        return tp in self.pending_offset_commits

    def prepare_offset_commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.pending_offset_commits.update(offsets)

    def fail_offset_commit(self, tp: TopicPartition, offset: OffsetAndMetadata) -> None:
        if self.pending_offset_commits.get(tp) == offset:
            del self.pending_offset_commits[tp]
