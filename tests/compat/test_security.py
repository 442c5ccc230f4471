"""The security rows: every client over SASL_SSL with SCRAM-SHA-512 and over SASL_PLAINTEXT with PLAIN
produces, consumes in a group and commits; with a wrong password it gets an authentication error.

The client code is tests/security's (each client's own idiom); the committed offsets are read back
with a raw OffsetFetch on the broker's PLAINTEXT listener.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kafkito.broker.auth.certs import write_set
from kafkito.broker.auth.users import store_add
from kafkito.broker.security.scram import ScramMechanism
from tests.compat import reference as ref
from tests.compat.clients import franzgo_client as franzgo
from tests.compat.clients import java_client
from tests.compat.clients.base import Driver
from tests.compat.harness import run_for_clients
from tests.compat.matrix import Matrix
from tests.security import clients, kcat
from tests.security.clients import Login
from tests.security.conftest import PLAIN_JAAS, PLAIN_PASSWORD, PLAIN_USER, SCRAM_PASSWORD, SCRAM_USER
from tests.security.kafkajs import run_kafkajs
from tests.support.brokers import ProcessBroker, free_port


class _Secured:
    def __init__(self, broker: ProcessBroker, ports: dict[str, int], ca: str) -> None:
        self.broker, self.ports, self.ca = broker, ports, ca

    def scram(self, password: str = SCRAM_PASSWORD) -> Login:
        bootstrap = f"127.0.0.1:{self.ports['SASL_SSL']}"
        return Login(bootstrap, "SASL_SSL", "SCRAM-SHA-512", SCRAM_USER, password, self.ca)

    def plain(self, password: str = PLAIN_PASSWORD) -> Login:
        bootstrap = f"127.0.0.1:{self.ports['SASL_PLAINTEXT']}"
        return Login(bootstrap, "SASL_PLAINTEXT", "PLAIN", PLAIN_USER, password)

    def committed(self, topic: str, group: str) -> int:
        return ref.committed(self.broker.bootstrap, group, topic, 1).get(0, -1)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Secured]:
    certs = tmp_path_factory.mktemp("compat-certs")
    write_set(certs, ["localhost", "127.0.0.1"], [])
    data = tmp_path_factory.mktemp("compat-secure") / "data"
    store_add(data, SCRAM_USER, SCRAM_PASSWORD, [ScramMechanism.SCRAM_SHA_512], 4096)
    ports = {"SASL_PLAINTEXT": free_port(), "SASL_SSL": free_port()}
    props = {
        "group.initial.rebalance.delay.ms": "0",
        "listeners": f"PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:{ports['SASL_PLAINTEXT']},"
        f"SASL_SSL://127.0.0.1:{ports['SASL_SSL']}",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(certs / "broker-keystore.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs / "ca.pem"),
    }
    broker = ProcessBroker(data, props=props).start()
    yield _Secured(broker, ports, str(certs / "ca.pem"))
    broker.stop()


def _kafkajs(login: Login) -> None:
    cmd = dict(bootstrap=login.bootstrap, ca=login.ca, mechanism=(login.mechanism or "").lower(),
               user=login.user, password=login.password)  # fmt: skip
    result = run_kafkajs(op="round-trip", topic=f"js-{id(login)}", group=f"js-group-{id(login)}", **cmd)
    assert result.get("failed") is None and result["committed"] == "10", result


def _kafkajs_refused(login: Login) -> str:
    cmd = dict(bootstrap=login.bootstrap, ca=login.ca, mechanism=(login.mechanism or "").lower(),
               user=login.user, password=login.password)  # fmt: skip
    result = run_kafkajs(op="login", **cmd)
    return f"{result.get('error')}: {result.get('message')}"


def _franzgo(s: _Secured, login: Login) -> None:
    topic, group = f"franzgo-{id(login)}", f"franzgo-group-{id(login)}"
    committed = franzgo.round_trip(
        login.bootstrap, login.ca, login.mechanism, login.user, login.password, topic, group
    )
    assert committed == 10 and s.committed(topic, group) == 10, f"committed {committed}"


def _franzgo_refused(login: Login) -> str:
    return franzgo.login_error(login.bootstrap, login.ca, login.mechanism, login.user, login.password)


def _round_trips(s: _Secured) -> dict[str, Callable[[Login], None]]:
    return {
        "confluent-kafka": clients.confluent_round_trip,
        "kafka-python": clients.kafka_python_round_trip,
        "aiokafka": clients.aiokafka_round_trip,
        "KafkaJS": _kafkajs,
        "kcat": lambda login: kcat.round_trip(login, s.committed),
        "kafka-clients": java_client.round_trip,
        "franz-go": lambda login: _franzgo(s, login),
    }


def _refusals() -> dict[str, Callable[[Login], str]]:
    return {
        "confluent-kafka": clients.confluent_login_error,
        "kafka-python": lambda login: clients.kafka_python_login_error(login)[1],
        "aiokafka": lambda login: clients.aiokafka_login_error(login)[1],
        "KafkaJS": _kafkajs_refused,
        "kcat": kcat.login_error,
        "kafka-clients": java_client.login_error,
        "franz-go": _franzgo_refused,
    }


def test_security(matrix: Matrix, drivers: list[Driver], secured: _Secured) -> None:
    def body(d: Driver) -> str | None:
        for login in (secured.scram(), secured.plain()):
            _round_trips(secured)[d.name](login)
        for login in (secured.scram("wrong"), secured.plain("wrong")):
            said = _refusals()[d.name](login)
            assert "Authentication failed" in said, f"wrong password: {said[-300:]}"
        return None

    run_for_clients(matrix, "security", drivers, body)
