"""Admin share-group calls of kafka-clients 4.4 (KIP-932): describeShareGroups, listShareGroupOffsets,
alterShareGroupOffsets, deleteShareGroupOffsets, deleteShareGroups.

Once a member has acknowledged every record, Kafka 4.4's listShareGroupOffsets answers the persisted
start offset, which moves only with the share state's next write: each partition's records come in one
batch, acknowledged at once and written with the start offset from before, so it stays 0 while the lag
(KIP-1226: the log end less that start offset and the records past it whose delivery is complete) is 0."""

from __future__ import annotations

import base64

from tests.java_admin.conftest import JavaAdmin, Member, unique, wait_described
from tests.support.waiting import wait_until


def _records(n: int, partition: int) -> list[dict[str, object]]:
    return [dict(partition=partition, key=None, value=base64.b64encode(b"s%d" % i).decode(), headers=[],
                 timestamp=None) for i in range(n)]  # fmt: skip


def test_share_group_described_offsets_listed_altered_deleted(admin: JavaAdmin) -> None:
    topic, group = admin.topic(partitions=2), unique("share")
    admin.client("produce", topic=topic, records=_records(4, 0) + _records(2, 1), codec="none")
    reset = [
        dict(type="GROUP", name=group, ops=[dict(name="share.auto.offset.reset", value="earliest", op="SET")])
    ]
    assert admin("incrementalAlterConfigs", resources=reset) == {f"GROUP:{group}": {}}
    member = Member(admin, "share", group, topic)
    try:
        live = wait_described(
            admin, "describeShareGroups", group,
            lambda d: d.get("state") == "Stable" and [m["assignment"] for m in d["members"]]
            == [[f"{topic}-0", f"{topic}-1"]],
            "a stable share group owning both partitions",
        )  # fmt: skip
        # Every record acknowledged: no lag, the start offsets still 0 (see the docstring; Kafka answers a
        # partition not initialized yet as null).
        done = {"startOffset": 0, "lag": 0}
        wait_until(
            lambda: admin("listShareGroupOffsets", group=group) == {f"{topic}-0": done, f"{topic}-1": done},
            60, "every record acknowledged",
            detail=lambda: str(admin("listShareGroupOffsets", group=group)),
        )  # fmt: skip
        busy = admin("alterShareGroupOffsets", group=group, topic=topic, offsets={"0": 1})
        busy_delete = admin("deleteShareGroupOffsets", group=group, topics=[topic])
        not_empty = admin("deleteShareGroups", groups=[group])[group]
    finally:
        member.stop()
    assert live["coordinator"] == 1 and live["groupEpoch"] >= 1
    assert live["members"][0]["memberEpoch"] >= 1
    assert busy["all"]["error"] == "GroupNotEmptyException"
    assert busy_delete["all"]["error"] == "GroupNotEmptyException"
    assert not_empty["error"] == "GroupNotEmptyException"
    wait_described(
        admin, "describeShareGroups", group, lambda d: d["state"] == "Empty", "an empty share group"
    )
    assert admin("listGroups", types=["share"])[group] == {
        "type": "Share", "protocol": "share", "state": "Empty", "simple": False
    }  # fmt: skip
    assert admin("alterShareGroupOffsets", group=group, topic=topic, offsets={"0": 1}) == {
        "all": {}, "partitions": {f"{topic}-0": {}},
    }  # fmt: skip
    assert admin("listShareGroupOffsets", group=group, topic=topic, partitions=[0])[f"{topic}-0"] == {
        "startOffset": 1, "lag": 3,
    }  # fmt: skip
    assert admin("deleteShareGroupOffsets", group=group, topics=[topic]) == {"all": {}, "topics": {topic: {}}}
    assert admin("listShareGroupOffsets", group=group) == {}
    assert admin("deleteShareGroups", groups=[group]) == {group: {}}
    gone = admin("deleteShareGroups", groups=[group])[group]
    assert gone["error"] == "GroupIdNotFoundException"


def test_share_calls_on_groups_that_are_not_share_groups(admin: JavaAdmin) -> None:
    missing = unique("missing")
    described = admin("describeShareGroups", groups=[missing])[missing]
    assert described["error"] == "GroupIdNotFoundException", described
    topic, consumer_group = admin.topic(), unique("consumer")
    admin("alterConsumerGroupOffsets", group=consumer_group, topic=topic, offsets={"0": 0})
    described = admin("describeShareGroups", groups=[consumer_group])[consumer_group]
    assert described["error"] == "GroupIdNotFoundException", described
