"""`kafkito groups ...`: lag per partition, members, state, reset-offsets, delete; real broker and clients."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from kafka import KafkaAdminClient, KafkaConsumer, OffsetAndMetadata, TopicPartition

from tests.cli.conftest import Cli
from tests.support.waiting import wait_until

# kafka-consumer-groups.sh --describe's columns, in its order
COLUMNS = [
    *("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"),
    *("CONSUMER-ID", "HOST", "CLIENT-ID"),
]


def _topic_with(cli: Cli, topic: str, counts: list[int]) -> None:
    cli.ok("topics", "create", topic, "--partitions", str(len(counts)))
    for partition, n in enumerate(counts):
        lines = "".join(f"{topic}-{partition}-{i}\n" for i in range(n))
        cli.ok("produce", topic, "--partition", str(partition), stdin=lines)


def _committed_and_ends(cli: Cli, group: str, topic: str) -> dict[int, tuple[int | None, int]]:
    """What the broker itself says, through kafka-python: committed and end offset per partition."""
    admin = KafkaAdminClient(bootstrap_servers=cli.bootstrap)
    consumer = KafkaConsumer(bootstrap_servers=cli.bootstrap)
    try:
        committed = admin.list_group_offsets(group)[group]
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic))]
        ends = consumer.end_offsets(tps)
        return {tp.partition: (committed[tp].offset if tp in committed else None, ends[tp]) for tp in tps}
    finally:
        consumer.close()
        admin.close()


def test_describe_shows_the_lag_of_each_partition(cli: Cli) -> None:
    _topic_with(cli, "gr-lag", [4, 3, 3])
    consumed = cli.ok("consume", "gr-lag", "--group", "gr-lag-g", "--from-beginning", "--max-messages", "5")
    assert len(consumed.splitlines()) == 5

    rows = json.loads(cli.ok("groups", "describe", "gr-lag-g", "--json"))["gr-lag-g"]
    truth = _committed_and_ends(cli, "gr-lag-g", "gr-lag")
    for row in rows:
        current, end = truth[row["partition"]]
        assert (row["current_offset"], row["log_end_offset"]) == (current, end)
        assert row["lag"] == (None if current is None else end - current)
    assert sum(r["current_offset"] or 0 for r in rows) == 5
    assert sum(r["lag"] for r in rows if r["lag"] is not None) + 5 == 10 - sum(
        truth[r["partition"]][1] for r in rows if r["current_offset"] is None
    )

    lines = cli.ok("groups", "describe", "gr-lag-g").splitlines()
    assert lines[:2] == ["", "Consumer group 'gr-lag-g' has no active members."]
    assert lines[3].split() == COLUMNS
    table = [line.split() for line in lines[4:]]
    for cells in table:
        current, end = truth[int(cells[2])]
        assert (
            cells[3:6] == [str(current), str(end), str(end - current)]
            if current is not None
            else ["-", str(end), "-"]
        )
        assert cells[6:] == ["-", "-", "-"]


@contextmanager
def _member(cli: Cli, topic: str, group: str) -> Iterator[KafkaConsumer]:
    consumer = KafkaConsumer(
        topic, bootstrap_servers=cli.bootstrap, group_id=group, client_id="cli-test-member",
        auto_offset_reset="earliest", enable_auto_commit=False,
    )  # fmt: skip
    try:
        wait_until(lambda: bool(consumer.poll(200)) or bool(consumer.assignment()), 30, "an assignment")
        yield consumer
    finally:
        consumer.close()


def test_describe_members_and_state_of_an_active_group(cli: Cli) -> None:
    _topic_with(cli, "gr-live", [2, 2])
    with _member(cli, "gr-live", "gr-live-g") as consumer:
        consumer.commit({TopicPartition("gr-live", 0): OffsetAndMetadata(1, "", -1)})
        lines = cli.ok("groups", "describe", "gr-live-g").splitlines()
        assert lines[0] == "" and lines[1].split() == COLUMNS
        rows = {int(cells[2]): cells for cells in (line.split() for line in lines[2:])}
        assert rows[0][3:6] == ["1", "2", "1"] and rows[1][3:6] == ["-", "2", "-"]
        for cells in rows.values():
            assert cells[6].startswith("cli-test-member-") and cells[7] == "/127.0.0.1"
            assert cells[8] == "cli-test-member"

        members = cli.ok("groups", "describe", "gr-live-g", "--members").splitlines()
        assert members[1].split() == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
        assert members[2].split()[2:] == ["/127.0.0.1", "cli-test-member", "2"]

        (state,) = json.loads(cli.ok("groups", "describe", "gr-live-g", "--state", "--json"))["gr-live-g"]
        assert state["state"] == "Stable" and state["members"] == 1
        assert state["assignment_strategy"] == "range"
        assert state["coordinator"] == f"{cli.bootstrap} (1)"

        refused = cli("groups", "reset-offsets", "gr-live-g", "--all-topics", "--to-earliest", "--execute")
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1
        assert "current state is Stable" in refused.stderr

        listed = cli.ok("groups", "list", "--state").splitlines()
        assert any(line.split()[:3] == ["gr-live-g", "Stable", "classic"] for line in listed[1:])


def _first_offset(cli: Cli, topic: str, group: str) -> int:
    out = cli.ok("consume", topic, "--group", group, "--max-messages", "1", "--json")
    return int(json.loads(out)["offset"])


def test_reset_offsets_dry_run_then_execute_and_a_consumer_resumes_there(cli: Cli) -> None:
    _topic_with(cli, "gr-reset", [6])
    cli.ok("consume", "gr-reset", "--group", "gr-reset-g", "--from-beginning", "--max-messages", "6")
    args = ("groups", "reset-offsets", "gr-reset-g", "--topic", "gr-reset")

    planned = cli.ok(*args, "--to-offset", "2").splitlines()
    assert planned[1:] == [
        "GROUP       TOPIC     PARTITION  NEW-OFFSET",
        "gr-reset-g  gr-reset  0          2",
    ]
    assert _committed_and_ends(cli, "gr-reset-g", "gr-reset") == {0: (6, 6)}  # a dry run changes nothing

    def new_offset(*how: str) -> int:
        (row,) = json.loads(cli.ok(*args, *how, "--json"))
        return int(row["new_offset"])

    assert new_offset("--to-earliest") == 0 and new_offset("--to-latest") == 6
    assert new_offset("--shift-by", "-4") == 2 and new_offset("--shift-by", "-40") == 0  # kept in the log
    assert new_offset("--to-offset", "99") == 6
    assert new_offset("--to-datetime", "2000-01-01T00:00:00.000") == 0
    assert new_offset("--to-datetime", "2999-01-01T00:00:00.000Z") == 6

    cli.ok(*args, "--to-offset", "2", "--execute")
    assert _committed_and_ends(cli, "gr-reset-g", "gr-reset") == {0: (2, 6)}
    assert _first_offset(cli, "gr-reset", "gr-reset-g") == 2

    cli.ok("groups", "reset-offsets", "gr-reset-g", "--all-topics", "--shift-by", "2", "--execute")
    assert _first_offset(cli, "gr-reset", "gr-reset-g") == 5  # the last consume committed 3


def test_reset_offsets_needs_a_target_and_partitions(cli: Cli) -> None:
    no_target = cli("groups", "reset-offsets", "g", "--all-topics")
    assert no_target.returncode == 2 and "one of the arguments --to-earliest" in no_target.stderr
    no_topics = cli("groups", "reset-offsets", "g", "--to-earliest")
    assert no_topics.returncode == 2 and no_topics.stderr.strip().endswith(
        "--topic TOPIC[:P,...] (repeatable) or --all-topics"
    )
    bad_time = cli("groups", "reset-offsets", "g", "--topic", "x", "--to-datetime", "yesterday")
    assert bad_time.returncode == 2 and "expected YYYY-MM-DDTHH:mm:SS.sss" in bad_time.stderr


def test_list_and_delete(cli: Cli) -> None:
    _topic_with(cli, "gr-del", [1])
    cli.ok("consume", "gr-del", "--group", "gr-del-g", "--from-beginning", "--max-messages", "1")
    assert "gr-del-g" in cli.ok("groups", "list").splitlines()
    deleted = cli.ok("groups", "delete", "gr-del-g")
    assert deleted == "Deletion of requested consumer groups ('gr-del-g') was successful.\n"
    assert "gr-del-g" not in cli.ok("groups", "list").splitlines()
    again = cli("groups", "delete", "gr-del-g")
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr == (
        "kafkito groups delete: GroupIdNotFoundError: consumer group 'gr-del-g' does not exist: "
        "`kafkito groups list` shows the groups\n"
    )
    unknown = cli("groups", "describe", "gr-nobody")
    assert unknown.returncode == 1
    assert unknown.stderr == (
        "kafkito groups describe: consumer group 'gr-nobody' does not exist: "
        "`kafkito groups list` shows the groups\n"
    )


def test_describe_a_kip848_consumer_group(cli: Cli) -> None:
    """A `group.protocol=consumer` group is described through ConsumerGroupDescribe, as Kafka's tool does."""
    from confluent_kafka import Consumer

    _topic_with(cli, "gr-848", [3, 1])
    consumer = Consumer(
        {"bootstrap.servers": cli.bootstrap, "group.id": "gr-848-g", "group.protocol": "consumer",
         "client.id": "cli-848", "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )  # fmt: skip
    try:
        consumer.subscribe(["gr-848"])
        got = []
        wait_until(
            lambda: bool(got.append(consumer.poll(0.2)) or len([m for m in got if m]) >= 4), 30, "records"
        )
        consumer.commit(asynchronous=False)
        rows = json.loads(cli.ok("groups", "describe", "gr-848-g", "--json"))["gr-848-g"]
        assert [(r["partition"], r["current_offset"], r["lag"], r["client_id"]) for r in rows] == [
            (0, 3, 0, "cli-848"),
            (1, 1, 0, "cli-848"),
        ]
        (state,) = json.loads(cli.ok("groups", "describe", "gr-848-g", "--state", "--json"))["gr-848-g"]
        assert state["state"] == "Stable" and state["members"] == 1
        assert state["assignment_strategy"] == "uniform"
    finally:
        consumer.close()
    after = cli.ok("groups", "describe", "gr-848-g").splitlines()
    assert after[1] == "Consumer group 'gr-848-g' has no active members."
