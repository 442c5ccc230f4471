"""What the `kafkito` fixtures hand a test under `--kafkito-target`: a real cluster instead of kafkito.

`--kafkito-target=kafka` is an Apache Kafka 4.4 the plugin starts (`apache_kafka.py`), emptied of
topics and groups before each test that takes `kafkito`, as a broker of the test's own would be;
`--kafkito-target=bootstrap:HOST:PORT` is any running cluster, never emptied. The handle has what a
real cluster has (`bootstrap_servers`, `nodes`, `create_topic`). A test that steers it (advance,
inject, restart, topology changes, the group views) is skipped, saying why: before it starts when its
own code calls them on the fixture, else at the call.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import textwrap
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import pytest

from kafkito.testing.handle import Node, property_names

KAFKITO = "kafkito"
KAFKA = "kafka"
BOOTSTRAP = "bootstrap:"

# The handle's methods that act on kafkito's broker itself: none exists on a real cluster.
STEERING = frozenset(
    {
        "advance", "now_ms", "inject", "faults", "clear_faults", "disconnect", "blackhole",
        "unblackhole", "describe_group", "group_timeline", "wait_for_group", "expire_member",
        "topology", "leader", "coordinator", "stop_node", "start_node", "move_leader",
        "move_coordinator", "restart", "steering", "broker", "loop", "call",
    }
)  # fmt: skip
_DELETE_WAIT_S = 30.0


@dataclass(frozen=True, slots=True)
class Target:
    """Where the suite's `kafkito` fixtures point: kafkito (the default), a Kafka the plugin starts,
    or a running cluster."""

    kind: str
    bootstrap: str = ""

    @classmethod
    def parse(cls, value: str) -> Target:
        if value in (KAFKITO, KAFKA):
            return cls(value)
        if value.startswith(BOOTSTRAP):
            servers = value[len(BOOTSTRAP) :]
            hosts = [s.strip() for s in servers.split(",") if s.strip()]
            if hosts and all(h.rpartition(":")[2].isdigit() and h.rpartition(":")[0] for h in hosts):
                return cls("bootstrap", ",".join(hosts))
        raise pytest.UsageError(
            f"--kafkito-target is kafkito, kafka or bootstrap:HOST:PORT[,HOST:PORT...], got {value!r}"
        )

    @property
    def description(self) -> str:
        return "Apache Kafka 4.4" if self.kind == KAFKA else f"the cluster at {self.bootstrap}"


def skip_reason(target: Target, what: str) -> str:
    return (
        f"--kafkito-target={target.kind}: {what} steers kafkito's own broker; "
        f"{target.description} cannot be steered"
    )


class TargetHandle:
    """A real cluster in place of `KafkitoHandle`: its address and topics, no steering."""

    def __init__(self, target: Target, bootstrap_servers: str) -> None:
        self.target = target
        self.bootstrap_servers = bootstrap_servers
        first = bootstrap_servers.split(",")[0]
        host, _, port = first.rpartition(":")
        self.host = host
        self.port = int(port)

    @property
    def nodes(self) -> list[Node]:
        from kafka import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers)
        try:
            brokers = admin.describe_cluster()["brokers"]
        finally:
            admin.close()
        return sorted((Node(b["broker_id"], b["host"], b["port"]) for b in brokers), key=lambda n: n.node_id)

    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = -1, **configs: Any
    ) -> None:
        from kafka import KafkaAdminClient
        from kafka.admin import NewTopic

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers)
        try:
            admin.create_topics(
                [NewTopic(name, partitions, replication_factor, topic_configs=property_names(configs))]
            )
        finally:
            admin.close()

    def stop(self) -> None:
        """The cluster is not the test's to stop."""

    def __getattr__(self, name: str) -> NoReturn:
        if name in STEERING:
            pytest.skip(skip_reason(self.target, f"{name}()"))
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"<TargetHandle {self.target.kind} {self.bootstrap_servers}>"


def empty_cluster(bootstrap_servers: str) -> None:
    """Delete every topic and consumer group that is not Kafka's own, and wait until they are gone."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers)
    try:
        groups = [g["group_id"] for g in admin.list_groups()]
        if groups:
            # A group that a previous test's client still belongs to stays (NON_EMPTY_GROUP).
            with contextlib.suppress(KafkaError):
                admin.delete_groups(groups)
        topics = [t for t in admin.list_topics() if not t.startswith("__")]
        if topics:
            admin.delete_topics(topics)
        deadline = time.monotonic() + _DELETE_WAIT_S
        while set(topics) & set(admin.list_topics()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"topics {topics} were not deleted within {_DELETE_WAIT_S} s")
            time.sleep(0.1)  # polling a deletion: Kafka gives no notice of it
    finally:
        admin.close()


def steering_calls(function: Callable[..., Any], fixtures: Iterable[str]) -> list[str]:
    """The steering methods a test function calls on its kafkito fixtures, read from its source, so
    that it is skipped before it starts threads or clients it would leave running."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return []
    names = set(fixtures)
    return [
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in STEERING
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in names
    ]


def marker_refusal(target: Target, marked: Mapping[str, Any]) -> str | None:
    """Why a test whose markers set broker properties (or nodes, as_version) cannot run on the target."""
    if not marked:
        return None
    names = ", ".join(sorted(marked))
    return f"--kafkito-target={target.kind}: @pytest.mark.kafkito({names}) configures kafkito's own broker"
