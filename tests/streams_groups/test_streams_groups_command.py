"""kafka-streams-groups.sh (kafka-tools 4.4's StreamsGroupCommand) against kafkito and against Apache Kafka
4.4, with the same command lines on the same group: listed, described (offsets, members, state, each
verbose too), its offsets reset (dry run and executed) and deleted, the group deleted; refused while a
member is active, done once it left. The group is formed by a member that heartbeats as Kafka Streams
does (StreamsGroupHeartbeat over the wire: a word count's topology, the internal topics the broker
creates) and commits offsets on the source topic, where records wait (lag).

What is compared is the tool's output with the coordinator's address and the epochs masked (the
reference's epochs count the metadata changes its internal topic creation caused), table rows sorted
(the tool prints hash maps) and column padding collapsed. The tool runs in one JVM for every command
line (StreamsGroupCommandDriver.java). Marked slow: two JVMs and the reference Kafka."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from tests.streams_groups.conftest import IMMEDIATE
from tests.streams_groups.test_wire import word_count
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.kafka_reference import KafkaReference, ReferenceUnavailable, classpath, java
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

DRIVER = Path(__file__).with_name("StreamsGroupCommandDriver.java")
FIND_COORDINATOR, HEARTBEAT, DESCRIBE, OFFSET_COMMIT = 10, 88, 89, 8
GROUP, SOURCE, PARTITIONS = "wc", "words", 2
MEMBER = "streams-groups-command-member-1"
COMMITTED = {0: 2, 1: 1}  # offsets committed by the member on the source topic's partitions
PRODUCED = 3  # records in each partition of the source topic
WAIT_S = 60.0
RETRIABLE = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


@dataclass(slots=True)
class Run:
    args: tuple[str, ...]
    stdout: str
    stderr: str
    rc: int


class Tool:
    """StreamsGroupCommand in a JVM of its own, one command line at a time."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        argv = [java(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dlog4j2.level=warn"]
        self.proc = subprocess.Popen(
            [*argv, "-cp", classpath(), str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def __call__(self, *args: str) -> Run:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\t".join(("--bootstrap-server", self.bootstrap, *args)) + "\n")
        self.proc.stdin.flush()
        parts: dict[str, list[str]] = {"stdout": [], "stderr": []}
        where, rc = "", None
        for line in self.proc.stdout:
            if line == "@@end\n":
                break
            if line.startswith("@@rc "):
                rc = int(line.split()[1])
            elif line.startswith("@@std"):
                where = line[2:].strip()
            else:
                parts[where].append(line)
        assert rc is not None, f"the tool's JVM ended: {self.proc.wait(WAIT_S)}"
        return Run(args, "".join(parts["stdout"]), "".join(parts["stderr"]), rc)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(WAIT_S)


@dataclass
class StreamsMember:
    """One Kafka Streams client as the coordinator sees it: it heartbeats, owns what it is given at once."""

    client: WireClient
    epoch: int = 0
    owns: list[dict[str, Any]] = field(default_factory=list)

    def heartbeat(self, epoch: int | None = None) -> Any:
        joining = self.epoch == 0
        sent = self.epoch if epoch is None else epoch
        r = self.client.request(
            HEARTBEAT, 1, group_id=GROUP, member_id=MEMBER, member_epoch=sent, endpoint_information_epoch=0,
            instance_id=None, rack_id=None, rebalance_timeout_ms=30_000 if joining else -1,
            topology=word_count(source=SOURCE) if joining else None,
            active_tasks=self.owns, standby_tasks=[], warmup_tasks=[],
            process_id="process-1" if joining else None, user_endpoint=None,
            client_tags=[] if joining else None,
            task_offsets=[] if joining else None, task_end_offsets=[] if joining else None,
            shutdown_application=False,
        )  # fmt: skip
        if r.error_code in RETRIABLE:
            return r
        assert r.error_code == 0, r
        if sent >= 0:
            self.epoch = r.member_epoch
        if r.active_tasks is not None:
            self.owns = [
                dict(subtopology_id=t.subtopology_id, partitions=sorted(t.partitions)) for t in r.active_tasks
            ]
        return r

    def coordinator_found(self) -> bool:
        """FindCoordinator, which makes Kafka create __consumer_offsets (its coordinator is NOT_COORDINATOR
        until then)."""
        r = self.client.request(FIND_COORDINATOR, 4, key_type=0, coordinator_keys=[GROUP])
        return bool(r.coordinators[0].error_code == 0)

    def stable_with_every_task(self) -> bool:
        if self.heartbeat().error_code in RETRIABLE:
            return False
        g = self.client.request(DESCRIBE, 1, group_ids=[GROUP], include_authorized_operations=False,
                                include_topology_description=False).groups[0]  # fmt: skip
        owned = sorted((t["subtopology_id"], p) for t in self.owns for p in t["partitions"])
        every = [(s, p) for s in "01" for p in range(PARTITIONS)]
        return g.group_state == "Stable" and owned == every and g.group_epoch == self.epoch

    def commit(self) -> None:
        partitions = [
            dict(partition_index=p, committed_offset=o, committed_leader_epoch=-1, committed_metadata="")
            for p, o in COMMITTED.items()
        ]
        r = self.client.request(
            OFFSET_COMMIT, 9, group_id=GROUP, generation_id_or_member_epoch=self.epoch, member_id=MEMBER,
            group_instance_id=None, topics=[dict(name=SOURCE, partitions=partitions)],
        )  # fmt: skip
        assert [p.error_code for t in r.topics for p in t.partitions] == [0] * PARTITIONS, r

    def leave(self) -> None:
        self.heartbeat(epoch=-1)


def command_session(bootstrap: str) -> list[Run]:
    """Every command line, first with the member active, then once it left."""
    create_topic(bootstrap, SOURCE, PARTITIONS)
    producer = Producer({"bootstrap.servers": bootstrap})
    for p in range(PARTITIONS):
        for i in range(PRODUCED):
            producer.produce(SOURCE, f"line {i}".encode(), partition=p)
    assert producer.flush(30) == 0
    runs: list[Run] = []
    tool = Tool(bootstrap)
    with WireClient(bootstrap) as client:
        member = StreamsMember(client)
        wait_until(member.coordinator_found, WAIT_S, "the group's coordinator")
        wait_until(member.stable_with_every_task, WAIT_S, "the member Stable with every task")
        member.commit()
        g = ("--group", GROUP)
        active: list[tuple[str, ...]] = [
            ("--list",),
            ("--list", "--state"),
            ("--describe", *g),
            ("--describe", *g, "--offsets", "--verbose"),
            ("--describe", *g, "--members"),
            ("--describe", *g, "--members", "--verbose"),
            ("--describe", *g, "--state"),
            ("--describe", *g, "--state", "--verbose"),
            ("--reset-offsets", *g, "--all-input-topics", "--to-earliest", "--dry-run"),
            ("--delete-offsets", *g, "--input-topic", SOURCE),
            ("--delete", *g),
        ]
        for args in active:
            runs.append(tool(*args))
            member.heartbeat()
        member.leave()
        empty: list[tuple[str, ...]] = [
            ("--list", "--state"),
            ("--describe", *g, "--state"),
            ("--describe", *g, "--offsets", "--verbose"),
            ("--describe", *g, "--members"),
            ("--reset-offsets", *g, "--all-input-topics", "--to-earliest", "--dry-run"),
            ("--reset-offsets", *g, "--input-topic", f"{SOURCE}:1", "--shift-by", "1", "--dry-run"),
            ("--reset-offsets", *g, "--input-topic", SOURCE, "--to-offset", "1", "--execute"),
            ("--reset-offsets", *g, "--all-input-topics", "--to-latest", "--dry-run"),
            ("--delete-offsets", *g, "--input-topic", SOURCE),
            ("--delete", *g),
            ("--list",),
            ("--describe", *g),
        ]
        runs += [tool(*args) for args in empty]
    tool.close()
    return runs


def shape(run: Run, bootstrap: str) -> tuple[object, ...]:
    """What of a run must be the same on both brokers: the exit code, stdout's lines with the coordinator's
    address and every epoch masked and spaces collapsed (table rows sorted), stderr's first line."""
    lines = [" ".join(line.replace(bootstrap, "HOST:PORT").split()) for line in run.stdout.splitlines()]
    lines = [_mask_epochs(line) for line in lines if line]
    header = [line for line in lines if line.startswith(("GROUP", "TOPIC"))][:1]
    rows = sorted(line for line in lines if line not in header)
    stderr = run.stderr.strip().splitlines()[:1]
    return run.args, run.rc, header, rows, stderr


def _mask_epochs(line: str) -> str:
    """--state --verbose: GROUP-EPOCH and TARGET-ASSIGNMENT-EPOCH; --members --verbose: TARGET-ASSIGNMENT-
    EPOCH, TOPOLOGY-EPOCH (kept: 1 on both) and MEMBER-EPOCH."""
    m = re.match(r"^(wc HOST:PORT \(\d+\) \w+ \w+) (\d+) (\d+) (\d+)$", line)
    if m:
        return f"{m[1]} E E {m[4]}"
    m = re.match(r"^(wc) (\d+) (\d+) (\S+ streams) (\d+) (.*)$", line)
    if m:
        return f"{m[1]} E {m[3]} {m[4]} E {m[6]}"
    return line


@pytest.fixture
def reference() -> Iterator[KafkaReference]:
    try:
        ref = KafkaReference().start()
    except ReferenceUnavailable as exc:
        pytest.fail(f"the reference Kafka 4.4 cannot run: {exc}")
    yield ref
    ref.stop()


def test_kafka_streams_groups_sh_answers_as_on_kafka(
    broker_factory: Callable[..., ThreadBroker], reference: KafkaReference
) -> None:
    kafkito = broker_factory(**IMMEDIATE)
    ours = [shape(run, kafkito.bootstrap) for run in command_session(kafkito.bootstrap)]
    theirs = [shape(run, reference.bootstrap) for run in command_session(reference.bootstrap)]
    for mine, kafka in zip(ours, theirs, strict=True):
        assert mine == kafka
