"""A coordinator rebuilt from its records equals the one that wrote them, over random histories.

Each history drives two classic groups (dynamic and static members, several protocols) and a
membership-less group through joins, syncs, heartbeats, leaves, static restarts, session expiries
(time jumps with members silent), offset commits, transactional offset commits of two producers
with their COMMIT and ABORT markers, offset expiry and DeleteGroups, against a
coordinator that writes to a real `__consumer_offsets` log. The history ends with every client
behaving until each group settles (Stable or Empty, nothing parked); then the broker restarts on the
same directory and the reloaded coordinator is compared with the live one.

Compared at quiescent points only: a group mid-rebalance reloads as its last stored generation, as
in Kafka, because its rebalance state is not written until the group turns Stable or Empty. What
is compared is what the records hold, which is everything a client can observe after the restart:
- the set of groups; a group that never wrote a record (Empty, generation 0, no offsets: only
  KIP-394 pending ids ever touched it) does not survive a restart, in Kafka either;
- per group: state, generation, protocol type and name, leader, and for an Empty group that had a
  generation when it became Empty (as wall time; its offsets age from it). A Stable group's record
  is written before it turns Stable, so it holds the CompletingRebalance time, as Kafka's does, and
  a group of offsets only has no record at all (its offsets age from their commit times);
- per member: id, instance id, client id and host, session and rebalance timeouts, metadata of the
  chosen protocol (the record keeps only that one, as Kafka's does) and assignment;
- per offset: offset, metadata, leader epoch, commit and expiry time (as wall time);
- per group and producer: the pending transactional offsets (a transaction may be open at restart).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.coordinator import (
    ClassicGroup,
    CoordinatorConfig,
    GroupState,
    JoinGroupResult,
    LeavingMember,
    OffsetAndMetadata,
    SyncGroupResult,
    TopicPartition,
)
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import Reply, subscription
from tests.offsets.harness import OffsetsHarness

SESSION_MS = 6_000
REBALANCE_MS = 8_000
RETENTION_MS = 120_000
GROUPS = ("g0", "g1")
SIMPLE = "simple"
PRODUCERS = (1, 2)
PROTOCOLS = (
    (("range", subscription("a")), ("roundrobin", subscription("a"))),
    (("roundrobin", subscription("b")), ("range", subscription("b"))),
    (("range", subscription("a", "b")),),
)
# (group, instance id): two dynamic and one static member per group.
CLIENTS = (("g0", None), ("g0", None), ("g0", "s0"), ("g1", None), ("g1", "s1"), ("g1", None))
CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=1_000, group_initial_rebalance_delay_ms=200, group_max_size=4
)


@dataclass
class Client:
    group: str
    instance: str | None
    client_id: str
    protocols: int = 0
    member_id: str = ""
    generation: int = -1
    leader: bool = False
    members: list[str] = field(default_factory=list)
    join: Reply[JoinGroupResult] | None = None
    sync: Reply[SyncGroupResult] | None = None
    synced: int = -1
    needs_join: bool = True
    active: bool = True

    def forget(self) -> None:
        self.member_id, self.generation, self.leader, self.needs_join = "", -1, False, True


class World:
    """The clients of one history and the coordinator they talk to."""

    def __init__(self, data_dir: Path) -> None:
        self.o = OffsetsHarness(data_dir, coordinator=CONFIG, retention_ms=RETENTION_MS)
        self.clients = [Client(g, inst, f"client-{i}") for i, (g, inst) in enumerate(CLIENTS)]

    # -- one client's moves -------------------------------------------------------------------

    def join(self, c: Client) -> None:
        if c.join is not None:
            return
        c.active = True
        c.join = self.o.h.join(
            c.group,
            c.member_id,
            instance=c.instance,
            client_id=c.client_id,
            session_ms=SESSION_MS,
            rebalance_ms=REBALANCE_MS,
            protocols=PROTOCOLS[c.protocols],
        )
        self.collect(c)

    def sync(self, c: Client) -> None:
        if c.sync is not None or c.generation < 0:
            return
        assignment = {m: f"{m}@{c.generation}".encode() for m in c.members} if c.leader else None
        c.sync = self.o.h.sync(c.group, c.member_id, c.generation, assignment, instance=c.instance)
        self.collect(c)

    def heartbeat(self, c: Client) -> None:
        if not c.member_id:
            return
        error = self.o.h.heartbeat(c.group, c.member_id, c.generation, c.instance)
        if error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
            c.forget()
        elif error is not ErrorCode.NONE:
            c.needs_join = True

    def leave(self, c: Client) -> None:
        if c.member_id:
            self.o.h.leave(c.group, LeavingMember(c.member_id, c.instance))
        c.forget()
        c.active = False

    def commit(self, c: Client, partition: int, offset: int) -> None:
        tp = TopicPartition("t", partition)
        self.o.h.commit(
            c.group,
            {tp: OffsetAndMetadata(offset, f"m{offset}", offset % 3)},
            member_id=c.member_id,
            generation=c.generation if c.member_id else -1,
            instance=c.instance if c.member_id else None,
        )

    def collect(self, c: Client) -> None:
        """Take in whatever answers arrived for `c`."""
        if c.join is not None and c.join.done:
            r = c.join.result
            c.join = None
            if r.error is ErrorCode.MEMBER_ID_REQUIRED:
                c.member_id = r.member_id
                self.join(c)
            elif r.error is ErrorCode.NONE:
                c.member_id, c.generation, c.leader = r.member_id, r.generation_id, r.leader_id == r.member_id
                c.members = [m.member_id for m in r.members]
                c.synced, c.needs_join = -1, False
            elif r.error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
                c.forget()
            else:
                c.needs_join = True
        if c.sync is not None and c.sync.done:
            r2 = c.sync.result
            c.sync = None
            if r2.error is ErrorCode.NONE:
                c.synced = c.generation
            elif r2.error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
                c.forget()
            else:
                c.needs_join = True

    def advance(self, ms: int) -> None:
        self.o.h.advance(ms)
        for c in self.clients:
            self.collect(c)

    # -- settling -----------------------------------------------------------------------------

    def behave(self, c: Client) -> None:
        """What a consumer does next: join, sync, or heartbeat."""
        if c.join is not None or c.sync is not None or not c.active:
            return
        if c.needs_join or not c.member_id or c.generation < 0:
            self.join(c)
        elif c.synced != c.generation:
            self.sync(c)
        else:
            self.heartbeat(c)

    def settled(self) -> bool:
        groups = self.o.coordinator.groups()
        if any(g.state not in (GroupState.STABLE, GroupState.EMPTY) for g in groups):
            return False
        if self.o.h.unanswered():
            return False
        return all(
            not c.active or (c.member_id and not c.needs_join and c.synced == c.generation >= 0)
            for c in self.clients
        )

    def settle(self) -> None:
        for _ in range(300):
            for c in self.clients:
                self.behave(c)
            if self.settled():
                return
            self.advance(250)
        raise AssertionError(f"never settled: {self.o.coordinator.groups()} {self.clients}")


# -- what a group looks like from outside -----------------------------------------------------------


def durable(group: ClassicGroup) -> bool:
    return not (group.is_(GroupState.EMPTY) and group.generation_id == 0 and not group.offsets)


def view(o: OffsetsHarness) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in o.coordinator.groups():
        if not durable(g):
            continue
        protocol = g.protocol_name
        members = {
            m.member_id: (
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.session_timeout_ms,
                m.rebalance_timeout_ms,
                m.metadata(protocol) if protocol is not None else None,
                m.assignment,
            )
            for m in g.members()
        }
        offsets = {
            tp: (
                om.offset,
                om.metadata,
                om.leader_epoch,
                om.commit_timestamp_ms,
                om.expire_timestamp_ms,
            )
            for tp, om in g.offsets.items()
        }
        ts = g.state_timestamp_ms
        became_empty = ts is not None and g.is_(GroupState.EMPTY) and g.generation_id > 0
        out[g.group_id] = dict(
            state=g.state,
            generation=g.generation_id,
            protocol_type=g.protocol_type,
            protocol=protocol,
            leader=g.leader_id,
            state_wall_ms=ts if became_empty else None,
            members=members,
            offsets=offsets,
        )
    for group_id in (*GROUPS, SIMPLE):
        pending = o.coordinator.pending_transactional_offsets(group_id)
        out[f"pending:{group_id}"] = {
            pid: {tp: (om.offset, om.metadata, om.commit_timestamp_ms) for tp, om in p.items()}
            for pid, p in pending.items()
        }
    return out


# -- histories ------------------------------------------------------------------------------------

client_index = st.integers(0, len(CLIENTS) - 1)
actions = st.one_of(
    st.tuples(st.just("join"), client_index),
    st.tuples(st.just("change_protocols"), client_index),
    st.tuples(st.just("sync"), client_index),
    st.tuples(st.just("heartbeat"), client_index),
    st.tuples(st.just("behave"), client_index),
    st.tuples(st.just("leave"), client_index),
    st.tuples(st.just("restart_static"), st.sampled_from([2, 4])),
    st.tuples(st.just("commit"), client_index, st.integers(0, 2), st.integers(0, 1_000)),
    st.tuples(st.just("commit_simple"), st.integers(0, 2), st.integers(0, 1_000)),
    st.tuples(st.just("advance"), st.sampled_from([0, 100, 1_000, 3_000, 7_000, 40_000])),
    st.tuples(
        st.just("txn_commit"),
        st.sampled_from(PRODUCERS),
        st.sampled_from([*GROUPS, SIMPLE]),
        st.integers(0, 2),
        st.integers(0, 1_000),
    ),
    st.tuples(st.just("end_txn"), st.sampled_from(PRODUCERS), st.booleans()),
    st.tuples(st.just("expire_offsets"), st.sampled_from([0, 130_000])),
    st.tuples(st.just("delete"), st.sampled_from([*GROUPS, SIMPLE])),
)
# A history is a few phases, each a burst of actions after which the clients settle (so that short
# quiet phases, where one change is all the last record shows, come up often).
histories = st.lists(st.lists(actions, min_size=1, max_size=10), max_size=5)


def _commit_simple(world: World, partition: int, offset: int) -> None:
    world.o.h.commit(SIMPLE, {TopicPartition("s", partition): OffsetAndMetadata(offset)})


def _txn_commit(world: World, producer_id: int, group: str, partition: int, offset: int) -> None:
    tp = TopicPartition("t", partition)
    world.o.h.txn_commit(group, {tp: OffsetAndMetadata(offset, f"x{offset}")}, producer_id=producer_id)


def _end_txn(world: World, producer_id: int, commit: bool) -> None:
    """The transaction coordinator's markers: one on every partition of the groups."""
    for partition in sorted({world.o.partition_of(g) for g in (*GROUPS, SIMPLE)}):
        world.o.h.end_txn(producer_id, commit, partition=partition)


def _expire_offsets(world: World, ms: int) -> None:
    world.advance(ms)
    world.o.manager.expire()


def _change_protocols(world: World, c: Client) -> None:
    c.protocols = (c.protocols + 1) % len(PROTOCOLS)
    c.needs_join = True


WORLD_ACTIONS: dict[str, Callable[..., None]] = {
    "commit_simple": _commit_simple,
    "txn_commit": _txn_commit,
    "end_txn": _end_txn,
    "advance": World.advance,
    "expire_offsets": _expire_offsets,
    "delete": lambda world, group: world.o.coordinator.delete_groups([group]),
}
CLIENT_ACTIONS: dict[str, Callable[..., None]] = {
    "join": World.join,
    "change_protocols": _change_protocols,
    "sync": World.sync,
    "heartbeat": World.heartbeat,
    "behave": World.behave,
    "leave": World.leave,
    "restart_static": lambda world, c: c.forget(),
    "commit": World.commit,
}


def run(world: World, action: tuple[Any, ...]) -> None:
    kind, *args = action
    if kind in WORLD_ACTIONS:
        WORLD_ACTIONS[kind](world, *args)
    else:
        CLIENT_ACTIONS[kind](world, world.clients[args[0]], *args[1:])
    for c in world.clients:
        world.collect(c)


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories)
def test_a_coordinator_rebuilt_from_its_records_equals_the_one_that_wrote_them(
    history: list[list[tuple[Any, ...]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))
        for phase in history:
            for action in phase:
                run(world, action)
            world.settle()
        world.settle()
        before = view(world.o)
        restarted = world.o.restart()
        try:
            assert view(restarted) == before
        finally:
            restarted.close()
