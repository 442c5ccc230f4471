"""SASL over exact requests: the state machine (what is accepted before authentication), SCRAM, PLAIN
and OAUTHBEARER exchanges and their failures, v0 raw tokens, and the listener Metadata advertises."""

from __future__ import annotations

import struct
import time

from kafkito.protocol.errors import ErrorCode as E
from tests.security.conftest import PLAIN_PASSWORD, PLAIN_USER, SCRAM_PASSWORD, SCRAM_USER, SecureBroker
from tests.security.sasl_wire import (
    ScramClient,
    authenticate,
    handshake,
    oauth_token,
    plain_token,
    scram_login,
    unsecured_jwt,
)
from tests.support.wire import WireClient


def _principals(secure: SecureBroker) -> set[str]:
    broker = secure.thread.broker
    assert broker is not None
    return secure.thread.call(lambda: {getattr(c, "principal", "?") for c in broker.connections})


def test_sasl_handshake_on_a_plaintext_listener_is_illegal_sasl_state(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("PLAINTEXT")) as client:
        assert handshake(client, "PLAIN").error_code == E.ILLEGAL_SASL_STATE
        assert authenticate(client, b"x").error_code == E.ILLEGAL_SASL_STATE
        assert client.request(18, 0).error_code == E.NONE  # still open


def test_only_api_versions_and_sasl_are_accepted_before_authentication(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        assert client.request(18, 3, client_software_name="t", client_software_version="1").error_code == 0
        client.send(3, 1, topics=[])  # Metadata before authenticating: Kafka closes the connection
        assert client.recv_frame() is None


def test_an_unknown_mechanism_is_refused_with_the_enabled_ones(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        response = handshake(client, "GSSAPI")
        assert response.error_code == E.UNSUPPORTED_SASL_MECHANISM
        assert set(response.mechanisms) == {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"}
        assert client.recv_frame() is None


def test_scram_exchange_then_metadata_advertises_the_listener_connected_to(secure: SecureBroker) -> None:
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
            last = scram_login(client, SCRAM_USER, SCRAM_PASSWORD, mechanism)
            assert last.error_code == E.NONE
            assert "User:carol" in _principals(secure)
            brokers = client.request(3, 1, topics=[]).brokers
            assert [(b[1], b[2]) for b in brokers] == [("127.0.0.1", secure.port("SASL_PLAINTEXT"))]
    with WireClient(secure.bootstrap("PLAINTEXT")) as client:
        brokers = client.request(3, 1, topics=[]).brokers
        assert [(b[1], b[2]) for b in brokers] == [("127.0.0.1", secure.port("PLAINTEXT"))]
        coordinator = client.request(10, 1, key="g", key_type=0)
        assert (coordinator.host, coordinator.port) == ("127.0.0.1", secure.port("PLAINTEXT"))


def test_wrong_scram_password_fails_with_kafkas_error_and_closes(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        last = scram_login(client, SCRAM_USER, "wrong")
        assert last.error_code == E.SASL_AUTHENTICATION_FAILED
        assert last.error_message == "Authentication failed: Invalid user credentials"
        assert client.recv_frame() is None


def test_unknown_scram_user_fails(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        assert scram_login(client, "nobody", "x").error_code == E.SASL_AUTHENTICATION_FAILED


def test_a_replayed_client_final_message_never_authenticates(secure: SecureBroker) -> None:
    scram = ScramClient(SCRAM_USER, SCRAM_PASSWORD)
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        handshake(client, "SCRAM-SHA-512")
        first = authenticate(client, scram.first())
        final = scram.final(first.auth_bytes)
        assert authenticate(client, final).error_code == E.NONE
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:  # same client nonce, new server nonce
        handshake(client, "SCRAM-SHA-512")
        authenticate(client, scram.first())
        assert authenticate(client, final).error_code == E.SASL_AUTHENTICATION_FAILED


def test_plain_with_v0_handshake_and_raw_tokens(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        assert handshake(client, "PLAIN", version=0).error_code == E.NONE
        token = plain_token(PLAIN_USER, PLAIN_PASSWORD)
        client.send_raw(struct.pack(">i", len(token)) + token)  # no Kafka header, as Kafka's v0 clients do
        assert client.request(3, 1, topics=[]).brokers  # authenticated: PLAIN answers nothing
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        handshake(client, "PLAIN", version=0)
        token = plain_token(PLAIN_USER, "wrong")
        client.send_raw(struct.pack(">i", len(token)) + token)
        assert client.recv_frame() is None  # v0 cannot carry the error: closed


def test_plain_authorization_id_must_be_the_user(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        handshake(client, "PLAIN")
        response = authenticate(client, plain_token(PLAIN_USER, PLAIN_PASSWORD, authzid="admin"))
        assert response.error_code == E.SASL_AUTHENTICATION_FAILED
        assert "authorization id" in response.error_message


def test_oauthbearer_unsecured_jwt(secure: SecureBroker) -> None:
    now = time.time()
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        handshake(client, "OAUTHBEARER")
        response = authenticate(
            client, oauth_token(unsecured_jwt({"sub": "dave", "exp": now + 60, "iat": now}))
        )
        assert response.error_code == E.NONE
        assert client.request(3, 1, topics=[]).brokers
        assert "User:dave" in _principals(secure)
    for bad in (
        unsecured_jwt({"sub": "dave", "exp": now - 10}),  # expired
        unsecured_jwt({"exp": now + 60}),  # no sub
        unsecured_jwt({"sub": "dave", "exp": now + 60}, alg="HS256"),  # signed: not an unsecured token
        "not-a-jwt",
    ):
        with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
            handshake(client, "OAUTHBEARER")
            challenge = authenticate(client, oauth_token(bad))
            if challenge.error_code == E.NONE:  # the JSON error challenge, acknowledged with %x01
                assert b'"status"' in challenge.auth_bytes
                challenge = authenticate(client, b"\x01")
            assert challenge.error_code == E.SASL_AUTHENTICATION_FAILED
            assert client.recv_frame() is None


def test_sasl_authenticate_without_handshake_closes(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        client.send(36, 1, auth_bytes=b"n,,n=carol,r=abc")
        assert client.recv_frame() is None


def test_a_big_frame_before_authentication_closes_and_after_it_is_served(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        client.send_raw(struct.pack(">i", 600_000) + b"\0" * 1024)  # over sasl.server.max.receive.size
        assert client.recv_frame() is None
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=secure.bootstrap("SASL_PLAINTEXT"),
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username=PLAIN_USER,
        sasl_plain_password=PLAIN_PASSWORD,
        max_request_size=2_000_000,
    )
    producer.send("big-after-login", b"x" * 700_000).get(30)  # the full socket.request.max.bytes again
    producer.close()
