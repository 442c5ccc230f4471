"""Kafka Streams instances as the coordinator sees them, over the wire (StreamsGroupHeartbeat): a word
count's topology, each instance its own process, owning at once what it is given, committing offsets."""

from __future__ import annotations

from typing import Any

from tests.console.support import ConsoleBroker, wait_until
from tests.support.admin import create_topic
from tests.support.wire import WireClient

HEARTBEAT, OFFSET_COMMIT = 88, 8
# The streams tests' brokers assign at once and keep one standby of each task.
STREAMS_PROPS = {
    "group.streams.initial.rebalance.delay.ms": 0,
    "group.streams.assignment.interval.ms": 0,
    "group.streams.num.standby.replicas": 1,
}


def word_count(app: str, source: str) -> dict[str, Any]:
    """Subtopology 0 reads `source` and writes the repartition topic; 1 reads it into a store."""
    repartition, changelog = f"{app}-counts-repartition", f"{app}-counts-changelog"
    internal = dict(partitions=0, replication_factor=0, topic_configs=[])
    return dict(epoch=1, subtopologies=[
        dict(subtopology_id="0", source_topics=[source], source_topic_regex=[], state_changelog_topics=[],
             repartition_sink_topics=[repartition], repartition_source_topics=[], copartition_groups=[]),
        dict(subtopology_id="1", source_topics=[], source_topic_regex=[],
             state_changelog_topics=[dict(name=changelog, **internal)], repartition_sink_topics=[],
             repartition_source_topics=[dict(name=repartition, **internal)], copartition_groups=[]),
    ])  # fmt: skip


def _wire(tasks: list[tuple[str, list[int]]]) -> list[dict[str, Any]]:
    return [dict(subtopology_id=s, partitions=p) for s, p in tasks]


class StreamsApp:
    """One instance (one stream thread): its member id, epoch and the tasks it owns by role."""

    def __init__(self, client: WireClient, group: str, source: str, member_id: str) -> None:
        self.client, self.group, self.source, self.member_id = client, group, source, member_id
        self.epoch = 0
        self.owned: dict[str, list[tuple[str, list[int]]]] = {"active": [], "standby": [], "warmup": []}

    def heartbeat(self, epoch: int | None = None) -> Any:
        joining = self.epoch == 0
        r = self.client.request(
            HEARTBEAT, 1, group_id=self.group, member_id=self.member_id,
            member_epoch=self.epoch if epoch is None else epoch, endpoint_information_epoch=0,
            instance_id=None, rack_id=None, rebalance_timeout_ms=30_000 if joining else -1,
            topology=word_count(self.group, self.source) if joining else None,
            active_tasks=_wire(self.owned["active"]), standby_tasks=_wire(self.owned["standby"]),
            warmup_tasks=_wire(self.owned["warmup"]),
            process_id=f"process-{self.member_id}" if joining else None, user_endpoint=None,
            client_tags=[] if joining else None, task_offsets=[] if joining else None,
            task_end_offsets=[] if joining else None, shutdown_application=False,
        )  # fmt: skip
        assert r.error_code == 0, r
        self.epoch = r.member_epoch
        if r.active_tasks is not None:
            for role, given in (
                ("active", r.active_tasks),
                ("standby", r.standby_tasks),
                ("warmup", r.warmup_tasks),
            ):
                self.owned[role] = [(t.subtopology_id, sorted(t.partitions)) for t in given]
        return r

    def commit(self, offsets: dict[int, int]) -> None:
        partitions = [
            dict(partition_index=p, committed_offset=o, committed_leader_epoch=-1, committed_metadata="")
            for p, o in offsets.items()
        ]
        r = self.client.request(
            OFFSET_COMMIT, 9, group_id=self.group, generation_id_or_member_epoch=self.epoch,
            member_id=self.member_id, group_instance_id=None,
            topics=[dict(name=self.source, partitions=partitions)],
        )  # fmt: skip
        assert all(p.error_code == 0 for t in r.topics for p in t.partitions), r

    def leave(self) -> None:
        self.heartbeat(epoch=-1)


def form(console: ConsoleBroker, client: WireClient, group: str, source: str, count: int) -> list[StreamsApp]:
    """`count` instances of the group, heartbeating until it is Stable with every one at its epoch."""
    create_topic(console.bootstrap, source, 2)
    apps = [StreamsApp(client, group, source, f"{group}-member-{i}") for i in range(count)]

    def stable() -> bool:
        for app in apps:
            app.heartbeat()
        status, body = console.call("GET", f"/api/groups/{group}")
        epochs = {m["member_epoch"] for m in body.get("members", [])} if status == 200 else set()
        return status == 200 and body["state"] == "Stable" and epochs == {body["generation"]}

    wait_until(stable, what=f"{group} Stable with {count} members")
    return apps
