"""Classic consumer groups: two members through join, sync, heartbeat and leave on their own
connections; offsets committed and fetched; the coordinator's answers to wrong generations and ids."""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

from typing import Any

from tests.conformance.framework import Side, scenario
from tests.conformance.scenarios_admin import create

OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN, HEARTBEAT, LEAVE, SYNC = 8, 9, 10, 11, 12, 13, 14
DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS, OFFSET_DELETE = 15, 16, 42, 47
PROTOCOLS = [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"}]


def join(side: Side, group: str, member: str, label: str, conn: str, wait: bool = True) -> Any:
    side.send(JOIN, 9, label, conn, group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=8_000,
              member_id=member, group_instance_id=None, protocol_type="consumer", protocols=PROTOCOLS, reason=None)  # fmt: skip
    return side.recv(conn) if wait else None


def sync(side: Side, group: str, gen: int, member: str, label: str, conn: str, assignments: list[Any]) -> Any:
    return side.request(SYNC, 5, label, conn, group_id=group, generation_id=gen, member_id=member,
                        group_instance_id=None, protocol_type="consumer", protocol_name="range",
                        assignments=assignments)  # fmt: skip


def group_state(side: Side, group: str) -> str | None:
    r = side.quietly(DESCRIBE_GROUPS, 5, groups=[group], include_authorized_operations=False)
    return None if r is None else str(r.groups[0].group_state)


def heartbeat(side: Side, group: str, gen: int, member: str, label: str, conn: str = "main") -> Any:
    return side.request(HEARTBEAT, 4, label, conn, group_id=group, generation_id=gen, member_id=member,
                        group_instance_id=None)  # fmt: skip


@scenario("sequence")
def classic_group_two_members(side: Side) -> None:
    g = side.name("group")
    side.find_coordinator(0, g, "group")
    first = join(side, g, "", "m1 without id", "m1")
    m1 = first.member_id
    j1 = join(side, g, m1, "m1 with its id", "m1")
    gen = j1.generation_id
    sync(side, g, gen, m1, "m1 leader", "m1", [{"member_id": m1, "assignment": b"a1"}])
    heartbeat(side, g, gen, m1, "m1 stable", "m1")
    heartbeat(side, g, gen + 5, m1, "m1 wrong generation", "m1")
    heartbeat(side, g, gen, "nobody", "unknown member", "m1")
    m2 = join(side, g, "", "m2 without id", "m2").member_id
    join(side, g, m2, "m2 with its id (parks)", "m2", wait=False)
    side.wait_for("the rebalance m2 starts", lambda: group_state(side, g) == "PreparingRebalance")
    heartbeat(side, g, gen, m1, "m1 told to rejoin", "m1")
    j1b = join(side, g, m1, "m1 rejoins", "m1")
    j2 = side.recv("m2")
    gen2 = j1b.generation_id
    leader_is_m1 = j1b.leader == m1
    side.note("leader", {"m1 leads": leader_is_m1, "m2 generation": j2.generation_id if j2 else None})
    side.send(SYNC, 5, "m2 follower (parks)", "m2", group_id=g, generation_id=gen2, member_id=m2,
              group_instance_id=None, protocol_type="consumer", protocol_name="range", assignments=[])  # fmt: skip
    sync(side, g, gen2, m1, "m1 leader", "m1",
         [{"member_id": m1, "assignment": b"a1"}, {"member_id": m2, "assignment": b"a2"}])  # fmt: skip
    side.recv("m2")
    side.request(DESCRIBE_GROUPS, 5, "stable, two members", groups=[g], include_authorized_operations=True)
    side.request(LIST_GROUPS, 5, "by type and state", states_filter=["Stable"], types_filter=["classic"])
    side.request(
        LEAVE,
        5,
        "m2 leaves",
        "m2",
        group_id=g,
        members=[{"member_id": m2, "group_instance_id": None, "reason": None}],
    )
    side.request(LEAVE, 5, "an unknown member", "m1", group_id=g,
                 members=[{"member_id": "nobody", "group_instance_id": None, "reason": None}])  # fmt: skip
    heartbeat(side, g, gen2, m1, "m1 after m2 left", "m1")
    side.request(
        LEAVE,
        5,
        "m1 leaves",
        "m1",
        group_id=g,
        members=[{"member_id": m1, "group_instance_id": None, "reason": None}],
    )
    side.request(
        DESCRIBE_GROUPS, 5, "empty", groups=[g, side.name("never")], include_authorized_operations=False
    )
    side.request(DELETE_GROUPS, 2, "the empty group and an unknown one", groups_names=[g, side.name("never")])


@scenario("sequence")
def join_group_errors(side: Side) -> None:
    g = side.name("group")
    side.request(JOIN, 9, "session timeout too small", group_id=g, session_timeout_ms=10, rebalance_timeout_ms=8_000,
                 member_id="", group_instance_id=None, protocol_type="consumer", protocols=PROTOCOLS, reason=None)  # fmt: skip
    side.request(JOIN, 9, "unknown member id", group_id=g, session_timeout_ms=10_000, rebalance_timeout_ms=8_000,
                 member_id="nobody", group_instance_id=None, protocol_type="consumer", protocols=PROTOCOLS, reason=None)  # fmt: skip
    side.request(JOIN, 9, "no protocols", group_id=g, session_timeout_ms=10_000, rebalance_timeout_ms=8_000,
                 member_id="", group_instance_id=None, protocol_type="consumer", protocols=[], reason=None)  # fmt: skip
    side.request(SYNC, 5, "unknown group", group_id=side.name("never"), generation_id=1, member_id="m",
                 group_instance_id=None, protocol_type="consumer", protocol_name="range", assignments=[])  # fmt: skip
    heartbeat(side, side.name("never"), 1, "m", "unknown group")
    side.request(LEAVE, 5, "unknown group", group_id=side.name("never"),
                 members=[{"member_id": "m", "group_instance_id": None, "reason": None}])  # fmt: skip


def commit(
    side: Side, g: str, t: str, label: str, offset: int, gen: int = -1, member: str = "", **extra: Any
) -> None:
    side.request(OFFSET_COMMIT, 9, label, group_id=g, generation_id_or_member_epoch=gen, member_id=member,
                 group_instance_id=None,
                 topics=[{"name": t, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                     "committed_leader_epoch": -1, "committed_metadata": "md"},
                                                    {"partition_index": 4, "committed_offset": 1,
                                                     "committed_leader_epoch": -1, "committed_metadata": None}]}],
                 **extra)  # fmt: skip


def fetch_offsets(side: Side, groups: list[str], t: str | None, label: str) -> None:
    side.request(OFFSET_FETCH, 9, label, require_stable=True,
                 groups=[{"group_id": g, "member_id": None, "member_epoch": -1,
                          "topics": None if t is None else [{"name": t, "partition_indexes": [0, 1]}]} for g in groups])  # fmt: skip


@scenario("sequence")
def offset_commit_and_fetch(side: Side) -> None:
    t, g = side.name(), side.name("group")
    create(side, t, "two partitions", 2)
    side.find_coordinator(0, g, "group")
    commit(side, g, t, "simple commit (no generation)", 3)
    fetch_offsets(side, [g], t, "two partitions")
    fetch_offsets(side, [g], None, "all topics")
    fetch_offsets(side, [g, side.name("never")], t, "an unknown group beside")
    side.request(OFFSET_FETCH, 1, "v1", group_id=g, topics=[{"name": t, "partition_indexes": [0]}])
    commit(side, g, t, "with a generation of a group that has none", 4, gen=3, member="m")
    commit(side, g, side.name("nope"), "unknown topic", 1)
    side.request(
        OFFSET_DELETE,
        0,
        "partition 0",
        group_id=g,
        topics=[{"name": t, "partitions": [{"partition_index": 0}]}],
    )
    fetch_offsets(side, [g], t, "after OffsetDelete")
