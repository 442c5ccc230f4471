"""Fixtures of the Java Admin tests: the broker the Admin calls go to, and the calls.

The broker is a `kafkito serve` child, or, with KAFKITO_JAVA_ADMIN_TARGET=kafka, the reference Apache
Kafka 4.4 (tests/support/kafka_reference.py): the same tests run against both, which is how their
expectations were checked to be Kafka's. Both get the same properties: the compared set, and an ACL
authorizer whose super user is the PLAINTEXT listener's ANONYMOUS principal (so ACL calls are served and
nothing is refused).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.compat.jvm import JavaError, java_clients
from tests.support.brokers import ProcessBroker
from tests.support.kafka_reference import COMPARED_PROPS, KafkaReference
from tests.support.waiting import wait_until

TARGET_ENV = "KAFKITO_JAVA_ADMIN_TARGET"
PROPS = {
    **COMPARED_PROPS,
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS",
}


@dataclass(frozen=True)
class JavaAdmin:
    """Admin calls of the Java client to one broker: `admin("createTopics", topics=[...])`."""

    bootstrap: str
    kind: str  # "kafkito" or "kafka"

    def __call__(self, call: str, **args: Any) -> Any:
        return java_clients().call("admin", bootstrap=self.bootstrap, call=call, args=args)

    def refused(self, call: str, **args: Any) -> JavaError:
        """The exception the whole call failed with (it must fail)."""
        with pytest.raises(JavaError) as caught:
            self(call, **args)
        return caught.value

    def client(self, op: str, **args: Any) -> Any:
        """Another command of the Java driver (produce, a consumer, a transaction) on this broker."""
        return java_clients().call(op, bootstrap=self.bootstrap, **args)

    def topic(self, partitions: int = 1, prefix: str = "t") -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        created = self("createTopics", topics=[dict(name=name, partitions=partitions, replicationFactor=1)])
        assert created[name].get("error") is None, created
        return name


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaAdmin]:
    if os.environ.get(TARGET_ENV, "kafkito") == "kafka":
        kafka = KafkaReference(PROPS).start()
        yield JavaAdmin(kafka.bootstrap, "kafka")
        kafka.stop()
        return
    data: Path = tmp_path_factory.mktemp("java-admin") / "data"
    broker = ProcessBroker(data, props=PROPS).start()
    yield JavaAdmin(broker.bootstrap, "kafkito")
    broker.kill()


class Member:
    """A KafkaConsumer (classic or KIP-848 protocol) or KafkaShareConsumer running in the driver JVM."""

    def __init__(self, admin: JavaAdmin, kind: str, group: str, topic: str, **extra: Any) -> None:
        self.admin, self.key = admin, unique(f"{group}-member")
        admin.client(
            "consumer-start", key=self.key, name=self.key, kind=kind, group=group, topic=topic, **extra
        )

    def stop(self) -> None:
        assert self.admin.client("consumer-stop", key=self.key)["closed"]


def wait_described(admin: JavaAdmin, call: str, group: str, check: Any, what: str) -> dict[str, Any]:
    """Describe `group` with `call` until `check(description)` holds."""
    seen: dict[str, Any] = {}

    def done() -> bool:
        seen.update(admin(call, groups=[group])[group])
        return bool(check(seen))

    wait_until(done, 60, what, detail=lambda: str(seen))
    return seen
