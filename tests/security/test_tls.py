"""TLS listeners: mTLS principals from client certificates (`ssl.principal.mapping.rules`), a client
without a certificate refused under `ssl.client.auth=required` and anonymous under `requested`; the
RFC 2253 subject and Kafka's mapping rule syntax."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkito.broker.auth.tls import PrincipalMapper, subject_name
from kafkito.broker.config import ConfigError
from tests.conftest import make_config
from tests.security import clients
from tests.security.clients import Login
from tests.security.conftest import SecureBroker
from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient


def _principals(secure: SecureBroker) -> set[str]:
    broker = secure.thread.broker
    assert broker is not None
    return secure.thread.call(lambda: {getattr(c, "principal", "?") for c in broker.connections})


def _tls_client(secure: SecureBroker, listener: str, cert: str | None) -> ssl.SSLSocket:
    ctx = ssl.create_default_context(cafile=secure.ca)
    if cert is not None:
        ctx.load_cert_chain(secure.certs / f"{cert}.pem", secure.certs / f"{cert}.key")
    raw = socket.create_connection(("127.0.0.1", secure.port(listener)), timeout=10)
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1")


def _api_versions_over(sock: ssl.SSLSocket) -> bytes:
    from kafkito.protocol.codec import build_request

    request = build_request(18, 0)
    request.with_header(correlation_id=1, client_id="tls-test")
    sock.sendall(bytes(request.encode(header=True, framed=True)))
    return sock.recv(4)


def test_mtls_client_certificate_is_the_principal(secure: SecureBroker) -> None:
    login = Login(secure.bootstrap("SSL"), "SSL", None, None, None, secure.ca,
                  str(secure.certs / "alice.pem"), str(secure.certs / "alice.key"))  # fmt: skip
    clients.confluent_round_trip(login)
    with _tls_client(secure, "SSL", "alice") as sock:
        assert len(_api_versions_over(sock)) == 4
        # the rule RULE:^CN=(.*)$/$1/L maps the subject CN=alice to alice
        wait_until(lambda: "User:alice" in _principals(secure), 10, "the mTLS principal")


def test_a_client_without_a_certificate_is_refused_when_required(secure: SecureBroker) -> None:
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)), _tls_client(secure, "SSL", None) as sock:
        if not _api_versions_over(sock):  # TLS 1.3: the refusal arrives at the first read
            raise ConnectionError("closed by the broker")


def test_sasl_ssl_needs_no_client_certificate(secure: SecureBroker) -> None:
    with _tls_client(secure, "SASL_SSL", None) as sock:
        assert len(_api_versions_over(sock)) == 4


@pytest.fixture
def requested(tmp_path: Path, certs: Path) -> Iterator[SecureBroker]:
    config = make_config(tmp_path / "data")
    for name, value in {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(certs / "broker-keystore.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs / "ca.pem"),
        "ssl.client.auth": "requested",
    }.items():
        config.set(name, value)
    thread = ThreadBroker(config).start()
    yield SecureBroker(thread, certs)
    thread.stop()


def test_requested_client_auth_takes_a_certificate_or_none(requested: SecureBroker) -> None:
    with _tls_client(requested, "SSL", None) as sock:
        assert len(_api_versions_over(sock)) == 4
        assert _principals(requested) == {"User:ANONYMOUS"}
    with _tls_client(requested, "SSL", "mallory") as sock:
        assert len(_api_versions_over(sock)) == 4
        wait_until(lambda: "User:CN=mallory" in _principals(requested), 10, "DEFAULT: the whole subject")
    with WireClient(requested.bootstrap("PLAINTEXT")) as client:
        brokers = client.request(3, 1, topics=[]).brokers
        assert [b[2] for b in brokers] == [requested.port("PLAINTEXT")]


def test_a_consumer_over_tls_reads_batches_too_large_to_copy_whole(requested: SecureBroker) -> None:
    """Fetch leaves large reads in the segment files for sendfile, which TLS cannot use: the connection
    reads them and writes the bytes through its TLS transport."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    from tests.support.produce import send_confluent
    from tests.support.records import Rec

    values = [bytes([i]) * 3000 for i in range(200)]  # batches well over Fetch's REGION_AT
    producer = Producer({"bootstrap.servers": requested.bootstrap("PLAINTEXT"), "linger.ms": 200})
    send_confluent(producer, "tls", [Rec(0, None, v) for v in values])
    consumer = Consumer(
        {
            "bootstrap.servers": requested.bootstrap("SSL"),
            "security.protocol": "SSL",
            "ssl.ca.location": requested.ca,
            "group.id": "tls-reader",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition("tls", 0, 0)])
    got: list[bytes] = []
    try:
        while len(got) < len(values):
            message = consumer.poll(10)
            assert message is not None, f"read {len(got)} of {len(values)} records over TLS"
            assert message.error() is None, message.error()
            got.append(message.value())
    finally:
        consumer.close()
    assert got == values


def test_subject_is_rfc_2253_most_specific_first() -> None:
    peercert = {
        "subject": (
            (("countryName", "US"),),
            (("organizationName", "Acme, Inc."),),
            (("organizationalUnitName", "eng"),),
            (("commonName", "alice"),),
        )
    }
    assert subject_name(peercert) == "CN=alice,OU=eng,O=Acme\\, Inc.,C=US"


def test_principal_mapping_rules_as_kafka_writes_them() -> None:
    mapper = PrincipalMapper(
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,DEFAULT"
    )
    assert mapper.name("CN=kafka-server,OU=ServiceUsers,O=Acme,C=US") == "kafka-server"
    assert mapper.name("CN=Duke,OU=JavaSoft,O=Sun Microsystems,L=SF,ST=CA,C=US") == "duke@javasoft"
    assert mapper.name("OU=x,cn=svc.one,O=y") == "SVC.ONE"
    assert PrincipalMapper("DEFAULT").name("CN=a,O=b") == "CN=a,O=b"
    assert PrincipalMapper("RULE:^CN=(.*)$/$1/").name("O=nothing") is None
    with pytest.raises(ConfigError):
        PrincipalMapper("RULE:broken")
