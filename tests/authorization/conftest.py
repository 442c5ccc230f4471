"""A broker enforcing ACLs (StandardAuthorizer): PLAINTEXT (User:ANONYMOUS) and SASL_PLAINTEXT with PLAIN
users, `User:admin` a super user; clients for the admin and for alice (who starts without ACLs)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_config
from tests.support.brokers import ThreadBroker

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{user}="{password}"' for user, password in PASSWORDS.items())
    + ";"
)


@dataclass
class AclBroker:
    thread: ThreadBroker

    def port(self, listener: str) -> int:
        broker = self.thread.broker
        assert broker is not None
        return broker.nodes.listener_bound[broker.config.node_id, listener]

    @property
    def plaintext(self) -> str:
        return f"127.0.0.1:{self.port('PLAINTEXT')}"

    @property
    def sasl(self) -> str:
        return f"127.0.0.1:{self.port('SASL_PLAINTEXT')}"

    def confluent(self, user: str, **extra: Any) -> dict[str, Any]:
        """A confluent-kafka configuration logging in as `user` (None: PLAINTEXT, User:ANONYMOUS)."""
        return {
            "bootstrap.servers": self.sasl,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": user,
            "sasl.password": PASSWORDS[user],
            **extra,
        }

    def kafka_python(self, user: str) -> dict[str, Any]:
        return {
            "bootstrap_servers": self.sasl,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN",
            "sasl_plain_username": user,
            "sasl_plain_password": PASSWORDS[user],
        }


def acl_broker(data_dir: Path, **extra: str) -> ThreadBroker:
    config = make_config(data_dir, group_initial_rebalance_delay_ms=0)
    props = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "authorizer.class.name": STANDARD_AUTHORIZER,
        "super.users": "User:admin;User:ops",
        **extra,
    }
    for name, value in props.items():
        config.set(name, value)
    return ThreadBroker(config)


@pytest.fixture
def acl_broker_factory(tmp_path: Path) -> Iterator[Callable[..., AclBroker]]:
    started: list[ThreadBroker] = []

    def start(**extra: str) -> AclBroker:
        thread = acl_broker(tmp_path / f"data{len(started)}", **extra).start()
        started.append(thread)
        return AclBroker(thread)

    yield start
    for thread in started:
        thread.stop()


@pytest.fixture
def secured(acl_broker_factory: Callable[..., AclBroker]) -> AclBroker:
    return acl_broker_factory()
