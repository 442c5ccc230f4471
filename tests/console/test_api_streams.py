"""A streams group in the console's JSON API: listed with type `streams`; its page's data holds the
topology as configured (subtopologies, source, repartition and changelog topics with their partition
counts), each member's active, standby and warm-up tasks with its epochs and status, the input topics'
committed offsets and lag, and a timeline whose generations carry the reasons of its rebalances."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.console.streams_apps import STREAMS_PROPS, form
from tests.console.support import ConsoleBroker, produce, wait_until
from tests.support.wire import WireClient


@pytest.fixture(scope="module")
def streams_console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleBroker]:
    broker = ConsoleBroker(Path(tmp_path_factory.mktemp("streams")) / "data", props=STREAMS_PROPS).start()
    yield broker
    assert broker.stop() == 0, broker.log_path.read_text()[-4000:]


def test_a_streams_group_with_its_topology_tasks_lag_and_timeline(streams_console: ConsoleBroker) -> None:
    console = streams_console
    with WireClient(console.bootstrap) as client:
        a, b = form(console, client, "wordcount", "lines", 2)
        produce(console.bootstrap, "lines", [(b"k%d" % i, b"a line", []) for i in range(6)])
        a.commit({0: 1, 1: 0})
        listed = {g["group_id"]: g for g in console.get("/api/groups")["groups"]}
        assert {k: listed["wordcount"][k] for k in ("state", "protocol", "members")} == {
            "state": "Stable", "protocol": "streams", "members": 2,
        }  # fmt: skip
        group = console.get("/api/groups/wordcount")
        assert (group["type"], group["state"], group["protocol"]) == ("streams", "Stable", "sticky")
        assert group["assignment_epoch"] == group["generation"]
        topology = group["topology"]
        assert (topology["epoch"], topology["ready"]) == (1, True)
        assert topology["subtopologies"] == [
            {"id": "0", "source_topics": ["lines"], "repartition_source_topics": [],
             "repartition_sink_topics": ["wordcount-counts-repartition"], "changelog_topics": []},
            {"id": "1", "source_topics": [],
             "repartition_source_topics": [{"name": "wordcount-counts-repartition", "partitions": 2}],
             "repartition_sink_topics": [],
             "changelog_topics": [{"name": "wordcount-counts-changelog", "partitions": 2}]},
        ]  # fmt: skip
        members = {m["member_id"]: m for m in group["members"]}
        every = ["0_0", "0_1", "1_0", "1_1"]
        assert sorted(t for m in members.values() for t in m["tasks"]["active"]) == every
        assert sorted(t for m in members.values() for t in m["tasks"]["standby"]) == every  # one standby each
        for app in (a, b):
            m = members[app.member_id]
            assert (m["member_epoch"], m["status"], m["process_id"]) == (
                app.epoch,
                "STABLE",
                f"process-{app.member_id}",
            )
            assert not set(m["tasks"]["active"]) & set(m["tasks"]["standby"])  # never both on one process
            assert m["target"]["active"] == m["tasks"]["active"]
        offsets = {(o["topic"], o["partition"]): o for o in group["offsets"]}
        assert set(offsets) == {("lines", 0), ("lines", 1), ("wordcount-counts-repartition", 0),
                                ("wordcount-counts-repartition", 1)}  # fmt: skip
        ends = [offsets["lines", p]["end_offset"] for p in (0, 1)]
        assert [offsets["lines", p]["lag"] for p in (0, 1)] == [ends[0] - 1, ends[1]]
        assert group["lag"] == sum(ends) - 1 and listed["wordcount"]["lag"] == group["lag"]
        owner = offsets["lines", 0]["member_id"]
        assert "0_0" in members[owner]["tasks"]["active"]

        b.leave()

        def alone() -> bool:
            a.heartbeat()
            group = console.get("/api/groups/wordcount")
            return bool(group["state"] == "Stable" and len(group["members"]) == 1)

        wait_until(alone, what="a alone in the group")
        timeline = console.get("/api/groups/wordcount/timeline")
        reasons = [g["reason"] for g in timeline["generations"]]
        assert f"member {b.member_id} joined" in reasons
        assert reasons[-1] == f"member {b.member_id} left or was fenced"
        assert timeline["generations"][-1]["completed"] and timeline["generations"][-1]["members"] == [
            a.member_id
        ]
        assert {m["kind"] for m in timeline["marks"]} >= {"join", "leave", "sync"}


def test_an_unknown_group_is_404_and_a_not_ready_group_shows_why(streams_console: ConsoleBroker) -> None:
    console = streams_console
    assert console.call("GET", "/api/groups/nobody-streams")[0] == 404
    with WireClient(console.bootstrap) as client:
        from tests.console.streams_apps import StreamsApp

        app = StreamsApp(client, "waiting", "no-such-topic", "waiting-member")
        app.heartbeat()
        group = console.get("/api/groups/waiting")
        assert (group["state"], group["topology"]["ready"]) == ("NotReady", False)
        assert group["topology"]["not_ready"] == "Source topics no-such-topic are missing."
        assert group["topology"]["subtopologies"][1]["changelog_topics"] == [
            {"name": "waiting-counts-changelog", "partitions": None}
        ]
        assert [m["tasks"]["active"] for m in group["members"]] == [[]]
        assert console.get("/api/groups/waiting/timeline")["events"][0]["event"] == "member_joined"
