"""A broker with every kind of listener (PLAINTEXT, SASL_PLAINTEXT, SASL_SSL, SSL with required client
certificates), development certificates from `kafkito certs`, PLAIN users from the JAAS config and a SCRAM
user written into the security store before the broker starts (as `kafkito users add --data-dir`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkito.broker.auth.certs import write_set
from kafkito.broker.auth.users import store_add
from kafkito.broker.security.scram import ScramMechanism
from tests.conftest import make_config
from tests.support.brokers import ThreadBroker

PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
)
SCRAM_USER, SCRAM_PASSWORD = "carol", "carol-secret"
PLAIN_USER, PLAIN_PASSWORD = "alice", "alice-secret"


@dataclass
class SecureBroker:
    thread: ThreadBroker
    certs: Path

    def port(self, listener: str) -> int:
        assert self.thread.broker is not None
        return self.thread.broker.nodes.listener_bound[self.thread.broker.config.node_id, listener]

    def bootstrap(self, listener: str) -> str:
        return f"127.0.0.1:{self.port(listener)}"

    @property
    def ca(self) -> str:
        return str(self.certs / "ca.pem")


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("certs")
    write_set(directory, ["localhost", "127.0.0.1"], ["alice", "mallory"])
    return directory


def security_config(data_dir: Path, certs: Path, **extra: str) -> ThreadBroker:
    both = [ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512]
    store_add(data_dir, SCRAM_USER, SCRAM_PASSWORD, both, 4096)
    config = make_config(data_dir, group_initial_rebalance_delay_ms=0)
    props = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(certs / "broker-keystore.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs / "ca.pem"),
        "listener.name.ssl.ssl.client.auth": "required",
        "listener.name.ssl.ssl.principal.mapping.rules": "RULE:^CN=(.*)$/$1/L,DEFAULT",
        **extra,
    }
    for name, value in props.items():
        config.set(name, value)
    return ThreadBroker(config)


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory, certs: Path) -> Iterator[SecureBroker]:
    thread = security_config(tmp_path_factory.mktemp("secure"), certs).start()
    yield SecureBroker(thread, certs)
    thread.stop()
