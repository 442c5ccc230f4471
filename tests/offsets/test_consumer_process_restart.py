"""A KIP-848 consumer group formed over raw ConsumerGroupHeartbeat requests against `kafkito serve`
survives a SIGKILL of the broker: the restarted process rebuilds it from `__consumer_offsets`,
describes it the same, and takes each member's next heartbeat at the epoch it had."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkito.broker.cli import main
from kafkito.protocol.errors import ErrorCode
from tests.support.admin import create_topic
from tests.support.brokers import ProcessBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = pytest.mark.slow

HEARTBEAT, DESCRIBE = 68, 69
GROUP = "restart-cg"


class WireMember:
    """A member speaking ConsumerGroupHeartbeat v1 itself, owning what it was last assigned."""

    def __init__(
        self, topics: list[str] | None = None, regex: str | None = None, instance: str | None = None
    ):
        self.member_id = str(uuid.uuid4())
        self.topics, self.regex, self.instance = topics, regex, instance
        self.epoch = 0
        self.owned: list[dict[str, Any]] = []

    def beat(self, client: WireClient) -> Any:
        joining = self.epoch == 0
        response = client.request(
            HEARTBEAT,
            1,
            group_id=GROUP,
            member_id=self.member_id,
            member_epoch=self.epoch,
            instance_id=self.instance,
            rack_id=None,
            rebalance_timeout_ms=30_000 if joining else -1,
            subscribed_topic_names=(self.topics or []) if joining else None,
            subscribed_topic_regex=self.regex if joining else None,
            server_assignor=None,
            topic_partitions=[] if joining else self.owned,
        )
        assert response.error_code == ErrorCode.NONE, response
        self.epoch = response.member_epoch
        if response.assignment is not None:  # revokes at once what it no longer has
            self.owned = [
                dict(topic_id=t.topic_id, partitions=sorted(t.partitions))
                for t in response.assignment.topic_partitions
            ]
        return response


def describe(client: WireClient) -> Any:
    return client.request(DESCRIBE, 1, group_ids=[GROUP], include_authorized_operations=False).groups[0]


def summary(group: Any) -> tuple[Any, ...]:
    """The description, comparable: states, epochs and every member with both assignments."""

    def parts(assignment: Any) -> frozenset[tuple[uuid.UUID, str, int]]:
        return frozenset(
            (t.topic_id, t.topic_name, p) for t in assignment.topic_partitions for p in t.partitions
        )

    members = sorted(
        (
            m.member_id,
            m.instance_id,
            m.member_epoch,
            m.client_id,
            tuple(m.subscribed_topic_names),
            m.subscribed_topic_regex,
            parts(m.assignment),
            parts(m.target_assignment),
            m.member_type,
        )
        for m in group.members
    )
    return (group.error_code, group.group_state, group.group_epoch, group.assignment_epoch, tuple(members))


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[ProcessBroker]:
    b = ProcessBroker(tmp_path / "data").start()
    yield b
    b.kill()


def test_a_consumer_group_survives_a_sigkill_of_the_broker(
    broker: ProcessBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    create_topic(broker.bootstrap, "orders", 6)
    create_topic(broker.bootstrap, "audit", 2)
    members = [
        WireMember(["orders"]),
        WireMember(regex="ord.*|aud.*"),
        WireMember(["orders", "audit"], instance="i3"),
    ]
    with WireClient(broker.bootstrap, client_id="restart-test") as client:

        def stable() -> bool:
            for m in members:
                m.beat(client)
            group = describe(client)
            return group.group_state.lower() == "stable" and all(
                m.member_epoch == group.group_epoch for m in group.members
            )

        wait_until(stable, 30, "the group to become stable")
        before = summary(describe(client))
    assert len(before[4]) == 3 and sum(len(m[6]) for m in before[4]) == 8  # 6 + 2 partitions, all owned

    broker.kill()
    broker.start()
    with WireClient(broker.bootstrap, client_id="restart-test") as client:
        wait_until(lambda: describe(client).error_code == ErrorCode.NONE, 30, "the group to be loaded")
        assert summary(describe(client)) == before
        for m in members:
            epoch = m.epoch
            assert m.beat(client).member_epoch == epoch  # not fenced, nothing to reconcile
        assert summary(describe(client)) == before

    assert main(["offsets", "dump", "--data-dir", str(tmp_path / "data"), "--group", GROUP]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    live_members = {
        line["key"]["member_id"] for line in lines if line["key"]["type"].endswith("member_metadata")
    }
    assert live_members == {m.member_id for m in members}
    regex = [line for line in lines if line["key"]["type"] == "consumer_group_regular_expression"]
    assert regex and sorted(regex[-1]["value"]["topics"]) == ["audit", "orders"]
