"""kafka-clients 4.4, the Java client: each action a command of the one driver JVM (tests/compat/jvm.py);
consumers are threads of that JVM, reporting what they see as events."""

from __future__ import annotations

import base64
import itertools
from collections.abc import Sequence
from typing import Any

from tests.compat.clients.base import (
    DEADLINE_S,
    HEARTBEAT_INTERVAL_MS,
    SESSION_TIMEOUT_MS,
    Consumer,
    Driver,
    GroupView,
    ShareAcks,
    TopicView,
    TxnStep,
)
from tests.compat.jvm import Event, JavaClients, java_clients
from tests.compat.records import Got, Rec
from tests.security.clients import Login

_keys = itertools.count(1)


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def _records(recs: Sequence[Rec]) -> list[dict[str, Any]]:
    return [
        dict(partition=r.partition, key=_b64(r.key), value=_b64(r.value),
             headers=[[k, _b64(v)] for k, v in r.headers], timestamp=r.timestamp)
        for r in recs
    ]  # fmt: skip


def _got(e: Event) -> Got:
    headers = tuple((k, _unb64(v) or b"") for k, v in e["headers"])
    return Got(
        e["partition"], int(e["offset"]), _unb64(e["key"]), _unb64(e["value"]), headers, e["timestamp"]
    )


def login_args(login: Login) -> dict[str, Any]:
    return dict(
        bootstrap=login.bootstrap,
        login=dict(protocol=login.protocol, mechanism=login.mechanism, user=login.user,
                   password=login.password, ca=login.ca),
    )  # fmt: skip


class JavaConsumer(Consumer):
    """A consumer running in the driver JVM: started and stopped by commands, its events fill the feed."""

    def __init__(self, name: str, **cmd: Any) -> None:
        super().__init__(name)
        self.key = f"{name}#{next(_keys)}"
        self.cmd = cmd
        self.jvm: JavaClients | None = None

    def start(self) -> JavaConsumer:
        self.jvm = java_clients()
        self.jvm.listen(self.key, self._on_event)
        self.jvm.call("consumer-start", key=self.key, name=self.name, **self.cmd)
        return self

    def _on_event(self, e: Event) -> None:
        kind = e["type"]
        if kind == "record":
            self.feed.add(_got(e))
            if "deliveryCount" in e:
                self.feed.delivered(e["partition"], int(e["offset"]), e["deliveryCount"])
        elif kind == "assigned":
            self.feed.group_assigned(e["partitions"])
        elif kind == "revoked":
            self.feed.group_revoked(e["partitions"])
        elif kind == "ready":
            self.feed.ready.set()
        elif kind == "error":
            self.feed.note(e.get("trace", ""))
            self.feed.fail(e["error"])
        elif kind == "closed":
            self.feed.closed.set()

    def stop(self) -> None:
        if self.jvm is None:
            return
        answer = self.jvm.call("consumer-stop", key=self.key, timeout=DEADLINE_S + 10)
        assert answer["closed"], f"{self.name} did not close:\n{self.describe()}"
        self.feed.closed.wait(10)
        self.jvm.forget(self.key)


class JavaDriver(Driver):
    name = "kafka-clients"
    not_applicable = {
        "old-protocol": "not supported by the client: kafka-clients 4 always negotiates versions with "
        "ApiVersions, speaks only to brokers of 2.1 and later (KIP-896) and writes message format v2 only",
    }
    notes = {
        "consume-earliest": "assign() + seekToBeginning(), no group",
        "consume-latest": "assign() + seekToEnd(); positioned once position() resolved every partition",
        "commit-fetch": "KafkaConsumer.commitSync with metadata outside the group, committed(), "
        "Admin.listConsumerGroupOffsets",
        "list-describe-groups": "Admin.listGroups and describeConsumerGroups",
        "transactions": "KafkaProducer transactions; offsets by sendOffsetsToTransaction with "
        "new ConsumerGroupMetadata(group) (no generation: from outside the group)",
        "consumer-protocol": "KafkaConsumer with group.protocol=consumer; Admin.describeConsumerGroups "
        "type and listGroups by type",
        "share-group": "KafkaShareConsumer (implicit and explicit acknowledgement, commitSync); the "
        "group config by Admin.incrementalAlterConfigs",
        "security": "SASL_SSL with a PEM truststore and SCRAM-SHA-512, SASL_PLAINTEXT with PLAIN; a "
        "wrong password is a SaslAuthenticationException from the Admin's first call",
    }

    @property
    def version(self) -> str:
        return f"{java_clients().call('version')['version']} (Java)"

    def _call(self, op: str, **args: Any) -> Any:
        return java_clients().call(op, **args)

    def metadata(self, bootstrap: str, topic: str) -> TopicView:
        e = self._call("metadata", bootstrap=bootstrap, topic=topic)
        brokers = sorted((b[0], b[1], b[2]) for b in e["brokers"])
        return TopicView(brokers, {p: leader for p, leader in e["partitions"]}, e["clusterId"])

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        self._call("create-topic", bootstrap=bootstrap, topic=topic, partitions=partitions)

    def delete_topic(self, bootstrap: str, topic: str) -> None:
        self._call("delete-topic", bootstrap=bootstrap, topic=topic)

    def list_topics(self, bootstrap: str) -> set[str]:
        return set(self._call("list-topics", bootstrap=bootstrap)["topics"])

    def produce(self, bootstrap: str, topic: str, recs: Sequence[Rec], codec: str) -> None:
        self._call("produce", bootstrap=bootstrap, topic=topic, records=_records(recs), codec=codec)

    def transact(self, bootstrap: str, topic: str, transactional_id: str, steps: Sequence[TxnStep]) -> None:
        plan = [
            dict(
                records=_records(step.records),
                commit=step.commit,
                offsets=None if step.group is None or not step.offsets
                else dict(group=step.group, partitions={str(p): o for p, o in step.offsets.items()}),
            )
            for step in steps
        ]  # fmt: skip
        e = self._call(
            "transaction", bootstrap=bootstrap, topic=topic, transactionalId=transactional_id, steps=plan
        )
        assert e["ended"] == [s.commit for s in steps], f"transactions ended {e['ended']}"

    def reader(self, bootstrap: str, topic: str, partitions: int, start: str) -> Consumer:
        return JavaConsumer(
            f"java-reader-{topic}", kind="reader", bootstrap=bootstrap, topic=topic, partitions=partitions,
            start=start,
        )  # fmt: skip

    def member(self, bootstrap: str, group: str, topic: str, name: str, assignor: str = "range") -> Consumer:
        return JavaConsumer(
            name, kind="member", protocol="classic", bootstrap=bootstrap, group=group, topic=topic,
            assignor=assignor, sessionTimeoutMs=SESSION_TIMEOUT_MS, heartbeatIntervalMs=HEARTBEAT_INTERVAL_MS,
        )  # fmt: skip

    def new_protocol_member(self, bootstrap: str, group: str, topic: str, name: str) -> Consumer:
        return JavaConsumer(
            name, kind="member", protocol="consumer", bootstrap=bootstrap, group=group, topic=topic
        )

    def share_member(
        self, bootstrap: str, group: str, topic: str, name: str, acks: ShareAcks | None = None
    ) -> Consumer:
        explicit = None if acks is None else [[p, o, kind] for (p, o), kind in acks.items()]
        return JavaConsumer(name, kind="share", bootstrap=bootstrap, group=group, topic=topic, acks=explicit)

    def group_type(self, bootstrap: str, group: str) -> str:
        return str(self._call("group-type", bootstrap=bootstrap, group=group)["type"]).lower()

    def set_group_config(self, bootstrap: str, group: str, name: str, value: str) -> None:
        self._call("set-group-config", bootstrap=bootstrap, group=group, name=name, value=value)

    def commit_and_fetch(
        self, bootstrap: str, group: str, topic: str, offsets: dict[int, int]
    ) -> dict[int, int]:
        got = self._call(
            "commit-fetch", bootstrap=bootstrap, group=group, topic=topic,
            offsets={str(p): o for p, o in offsets.items()},
        )  # fmt: skip
        return {int(p): o for p, o in got.items()}

    def describe_group(self, bootstrap: str, group: str) -> GroupView:
        e = self._call("describe-group", bootstrap=bootstrap, group=group)
        members = [
            (client, {t: sorted(ps) for t, ps in assignment.items()}) for client, assignment in e["members"]
        ]
        return GroupView(e["listed"], e["protocolType"], e["state"], e["protocol"], members)


def round_trip(login: Login) -> None:
    """Produce 10 records, consume them in a group and commit, over a secured listener."""
    assert java_clients().call("round-trip", **login_args(login))["committed"] == 10


def login_error(login: Login) -> str:
    """The exception the Java client throws when its login is refused."""
    return str(java_clients().call("login-error", **login_args(login))["error"])
