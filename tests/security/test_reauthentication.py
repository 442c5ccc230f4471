"""KIP-368 re-authentication with `connections.max.reauth.ms`: the session lifetime in SaslAuthenticate,
re-authenticating on the same connection (same principal, same mechanism), an expired session closed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkito.protocol.errors import ErrorCode as E
from tests.security import clients
from tests.security.clients import Login
from tests.security.conftest import (
    PLAIN_PASSWORD,
    PLAIN_USER,
    SCRAM_PASSWORD,
    SCRAM_USER,
    SecureBroker,
    security_config,
)
from tests.security.sasl_wire import (
    authenticate,
    handshake,
    oauth_token,
    plain_token,
    scram_login,
    unsecured_jwt,
)
from tests.support.wire import WireClient

LIFETIME_MS = 400


@pytest.fixture(scope="module")
def reauth(tmp_path_factory: pytest.TempPathFactory, certs: Path) -> Iterator[SecureBroker]:
    thread = security_config(
        tmp_path_factory.mktemp("reauth"), certs, **{"connections.max.reauth.ms": str(LIFETIME_MS)}
    ).start()
    yield SecureBroker(thread, certs)
    thread.stop()


def test_session_lifetime_is_announced_and_renewed_on_the_same_connection(reauth: SecureBroker) -> None:
    with WireClient(reauth.bootstrap("SASL_PLAINTEXT")) as client:
        first = scram_login(client, SCRAM_USER, SCRAM_PASSWORD)
        assert (first.error_code, first.session_lifetime_ms) == (E.NONE, LIFETIME_MS)
        assert client.request(3, 1, topics=[]).brokers
        again = scram_login(client, SCRAM_USER, SCRAM_PASSWORD)  # KIP-368: a new handshake on the connection
        assert (again.error_code, again.session_lifetime_ms) == (E.NONE, LIFETIME_MS)
        assert client.request(3, 1, topics=[]).brokers


def test_an_expired_session_is_closed_at_its_next_request(reauth: SecureBroker) -> None:
    with WireClient(reauth.bootstrap("SASL_PLAINTEXT")) as client:
        assert scram_login(client, SCRAM_USER, SCRAM_PASSWORD).error_code == E.NONE
        time.sleep(LIFETIME_MS / 1000 * 2)  # models the session's lifetime passing without re-authentication
        client.send(3, 1, topics=[])
        assert client.recv_frame() is None


def test_reauthentication_cannot_change_the_principal(reauth: SecureBroker) -> None:
    with WireClient(reauth.bootstrap("SASL_PLAINTEXT")) as client:
        handshake(client, "PLAIN")
        assert authenticate(client, plain_token(PLAIN_USER, PLAIN_PASSWORD)).error_code == E.NONE
        handshake(client, "PLAIN")
        response = authenticate(client, plain_token("admin", "admin-secret"))
        assert response.error_code == E.SASL_AUTHENTICATION_FAILED
        assert "Cannot change principals" in response.error_message
        assert client.recv_frame() is None


def test_reauthentication_cannot_change_the_mechanism(reauth: SecureBroker) -> None:
    with WireClient(reauth.bootstrap("SASL_PLAINTEXT")) as client:
        handshake(client, "PLAIN")
        assert authenticate(client, plain_token(PLAIN_USER, PLAIN_PASSWORD)).error_code == E.NONE
        assert handshake(client, "SCRAM-SHA-512").error_code == E.ILLEGAL_SASL_STATE
        assert client.recv_frame() is None


def test_an_oauthbearer_session_ends_no_later_than_its_token(reauth: SecureBroker) -> None:
    with WireClient(reauth.bootstrap("SASL_PLAINTEXT")) as client:
        handshake(client, "OAUTHBEARER")
        jwt = unsecured_jwt({"sub": "dave", "exp": time.time() + 0.2})
        response = authenticate(client, oauth_token(jwt))
        assert response.error_code == E.NONE
        assert 0 < response.session_lifetime_ms <= 200


def test_without_reauth_the_lifetime_is_zero_and_handshake_is_illegal(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        assert scram_login(client, SCRAM_USER, SCRAM_PASSWORD).session_lifetime_ms == 0
        assert handshake(client, "SCRAM-SHA-512").error_code == E.ILLEGAL_SASL_STATE
        assert client.request(18, 0).error_code == E.NONE


def test_confluent_kafka_reauthenticates_on_its_connections(reauth: SecureBroker) -> None:
    from confluent_kafka import Producer
    from structlog.testing import capture_logs

    conf = clients.confluent_config(
        Login(
            reauth.bootstrap("SASL_SSL"), "SASL_SSL", "SCRAM-SHA-512", SCRAM_USER, SCRAM_PASSWORD, reauth.ca
        )
    )
    with capture_logs() as logs:
        producer = Producer(conf)
        for i in range(12):
            producer.produce("reauth-topic", f"v{i}".encode())
            assert producer.flush(30) == 0
            time.sleep(LIFETIME_MS / 1000 / 4)  # models time passing: three session lifetimes in all
    events = [e["event"] for e in logs]
    assert "sasl.reauthenticated" in events
    assert not any("expired" in str(e.get("reason", "")) for e in logs)


def test_confluent_kafka_oauthbearer_unsecured_jwt(reauth: SecureBroker) -> None:
    from confluent_kafka import Producer

    producer = Producer({
        "bootstrap.servers": reauth.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
        "sasl.oauthbearer.config": "principal=dave lifeSeconds=60",
    })  # fmt: skip
    producer.produce("oauth-topic", b"hello")
    assert producer.flush(30) == 0
