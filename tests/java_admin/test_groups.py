"""Admin group calls of kafka-clients 4.4 on classic and KIP-848 consumer groups: listGroups,
listConsumerGroups, describeConsumerGroups, describeClassicGroups, deleteConsumerGroups,
list/alter/deleteConsumerGroupOffsets, removeMembersFromConsumerGroup."""

from __future__ import annotations

from typing import Any

from tests.java_admin.conftest import JavaAdmin, Member, unique, wait_described


def _stable_with(n: int) -> Any:
    return lambda d: (
        d.get("state") == "Stable"
        and len(d.get("members", [])) == n
        and all(m["assignment"] for m in d["members"])
    )


def test_classic_group_listed_described_and_its_offsets(admin: JavaAdmin) -> None:
    topic, group = admin.topic(partitions=2), unique("classic")
    member = Member(admin, "member", group, topic, protocol="classic")
    try:
        live = wait_described(
            admin, "describeConsumerGroups", group, _stable_with(1), "a stable classic group"
        )
        classic = admin("describeClassicGroups", groups=[group])[group]
        listed = admin("listGroups")[group]
        by_type = admin("listGroups", types=["classic"], states=["Stable"])
        committed_live = admin("alterConsumerGroupOffsets", group=group, topic=topic, offsets={"0": 1})
        subscribed = admin("deleteConsumerGroupOffsets", group=group, topic=topic, partitions=[0])
        not_empty = admin("deleteConsumerGroups", groups=[group])[group]
    finally:
        member.stop()
    assert (live["type"], live["assignor"], live["simple"], live["coordinator"]) == (
        "Classic",
        "range",
        False,
        1,
    )
    assert [m["assignment"] for m in live["members"]] == [[f"{topic}-0", f"{topic}-1"]]
    assert (classic["state"], classic["protocol"], classic["protocolData"]) == ("Stable", "consumer", "range")
    assert listed == {"type": "Classic", "protocol": "consumer", "state": "Stable", "simple": False}
    assert group in by_type
    assert committed_live["partitions"][f"{topic}-0"]["error"] == "UnknownMemberIdException"
    assert subscribed["partitions"][f"{topic}-0"]["error"] == "GroupSubscribedToTopicException"
    assert not_empty["error"] == "GroupNotEmptyException"
    empty = wait_described(admin, "describeConsumerGroups", group, lambda d: d["state"] == "Empty", "empty")
    assert empty["members"] == []
    assert admin("listConsumerGroups")[group] == {"type": "Classic", "state": "Empty", "simple": False}


def test_consumer_offsets_alter_list_delete_and_group_deletion(admin: JavaAdmin) -> None:
    topic, group = admin.topic(partitions=3), unique("offsets")
    assert admin("alterConsumerGroupOffsets", group=group, topic=topic, offsets={"0": 5, "2": 7}) == {
        "all": {}, "partitions": {f"{topic}-0": {}, f"{topic}-2": {}},
    }  # fmt: skip
    listed = admin("listConsumerGroupOffsets", groups=[group])[group]
    assert listed == {
        f"{topic}-0": {"offset": 5, "metadata": "altered", "leaderEpoch": -1},
        f"{topic}-2": {"offset": 7, "metadata": "altered", "leaderEpoch": -1},
    }
    asked = admin("listConsumerGroupOffsets", groups=[group], topic=topic, partitions=[0, 1])[group]
    assert asked == {
        f"{topic}-0": {"offset": 5, "metadata": "altered", "leaderEpoch": -1},
        f"{topic}-1": None,
    }
    simple = admin("listGroups")[group]
    assert simple == {"type": "Classic", "protocol": "", "state": "Empty", "simple": True}
    assert admin("deleteConsumerGroupOffsets", group=group, topic=topic, partitions=[0]) == {
        "all": {}, "partitions": {f"{topic}-0": {}},
    }  # fmt: skip
    assert list(admin("listConsumerGroupOffsets", groups=[group])[group]) == [f"{topic}-2"]
    assert admin("deleteConsumerGroups", groups=[group]) == {group: {}}
    gone = admin("deleteConsumerGroups", groups=[group])[group]
    assert gone["error"] == "GroupIdNotFoundException"
    assert group not in admin("listGroups")
    missing = unique("missing")
    unknown = admin("deleteConsumerGroupOffsets", group=missing, topic=topic, partitions=[0])
    assert unknown["all"]["error"] == "GroupIdNotFoundException"


def test_describe_a_group_nobody_knows(admin: JavaAdmin) -> None:
    group = unique("nobody")
    described = admin("describeConsumerGroups", groups=[group])[group]
    assert described["error"] == "GroupIdNotFoundException", described
    classic = admin("describeClassicGroups", groups=[group])[group]
    assert classic == {"error": "GroupIdNotFoundException", "message": "The group id does not exist."}


def test_consumer_protocol_group_described(admin: JavaAdmin) -> None:
    topic, group = admin.topic(partitions=4), unique("kip848")
    member = Member(admin, "member", group, topic, protocol="consumer")
    try:
        live = wait_described(
            admin, "describeConsumerGroups", group, _stable_with(1), "a stable consumer group"
        )
        listed = admin("listGroups", types=["consumer"])
        committed_live = admin("alterConsumerGroupOffsets", group=group, topic=topic, offsets={"0": 1})
    finally:
        member.stop()
    assert (live["type"], live["assignor"], live["simple"]) == ("Consumer", "uniform", False)
    assert live["groupEpoch"] >= 1 and live["targetAssignmentEpoch"] == live["groupEpoch"]
    assert live["members"][0]["assignment"] == [f"{topic}-{p}" for p in range(4)]
    assert listed[group]["type"] == "Consumer" and listed[group]["protocol"] == "consumer"
    assert committed_live["partitions"][f"{topic}-0"]["error"] == "UnknownMemberIdException"
    classic = admin("describeClassicGroups", groups=[group])[group]
    assert classic["error"] == "GroupIdNotFoundException", classic


def test_remove_static_members(admin: JavaAdmin) -> None:
    topic, group = admin.topic(partitions=2), unique("static")
    members = [
        Member(
            admin, "member", group, topic, protocol="classic", config={"group.instance.id": f"instance-{i}"}
        )
        for i in range(2)
    ]
    try:
        wait_described(admin, "describeConsumerGroups", group, _stable_with(2), "two static members")
        removed = admin("removeMembersFromConsumerGroup", group=group, instances=["instance-0", "nobody"])
        assert removed["members"] == {
            "instance-0": {},
            "nobody": {
                "error": "UnknownMemberIdException",
                "message": removed["members"]["nobody"]["message"],
            },
        }
        assert removed["all"]["error"] == "UnknownMemberIdException"
        everyone = admin("removeMembersFromConsumerGroup", group=group)
        assert everyone["all"] == {}
    finally:
        for m in members:
            m.stop()
    missing = unique("missing")
    unknown = admin("removeMembersFromConsumerGroup", group=missing, instances=["x"])
    assert unknown["all"]["error"] == "UnknownMemberIdException"  # a LeaveGroup to a group nobody knows
