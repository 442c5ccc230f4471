"""Hypothesis against the SASL exchanges: truncated, garbage and mutated SCRAM messages, replayed nonces
and wrong proofs never authenticate, and never raise anything but the refusal, in the mechanism, in the
connection's SASL gate, or over a real connection (which then closes, and the broker serves on)."""

from __future__ import annotations

import base64
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.auth.gate import SaslGate
from kafkito.broker.auth.listener_security import ListenerSecurity
from kafkito.broker.auth.mechanisms import AuthenticationFailed
from kafkito.broker.auth.mechanisms.scram import ScramServer
from kafkito.broker.config import Config
from kafkito.broker.dispatch import CloseConnection
from kafkito.broker.listeners import listeners_of
from kafkito.broker.security.scram import ScramMechanism, credential_from_password
from kafkito.protocol.codec import build_request
from tests.security.conftest import PLAIN_JAAS, SCRAM_PASSWORD, SCRAM_USER, SecureBroker
from tests.security.sasl_wire import ScramClient
from tests.support.wire import WireClient

M = ScramMechanism.SCRAM_SHA_512
CREDENTIAL = credential_from_password(M, "right", 4096, salt=b"s" * 16)


def _lookup(user: str, m: ScramMechanism) -> object:
    return CREDENTIAL if user == "u" and m == M else None


def _server() -> ScramServer:
    return ScramServer(M, _lookup)  # type: ignore[arg-type]


def _feed(server: ScramServer, tokens: list[bytes]) -> None:
    """Feed tokens until the server refuses; it must never complete."""
    for token in tokens:
        try:
            server.evaluate(token)
        except AuthenticationFailed:
            return
        assert not server.complete


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=200), min_size=1, max_size=4))
def test_garbage_never_authenticates(tokens: list[bytes]) -> None:
    _feed(_server(), tokens)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_truncated_and_mutated_exchanges_never_authenticate(data: st.DataObject) -> None:
    client = ScramClient("u", data.draw(st.sampled_from(["right", "wrong", ""])) or "x", "sha512")
    server = _server()
    first = client.first()
    server_first = server.evaluate(first)
    final = client.final(server_first)
    cut = data.draw(st.integers(0, len(final)))
    flip = data.draw(st.integers(0, len(final) - 1))
    mutated = bytearray(final)
    mutated[flip] ^= data.draw(st.integers(1, 255))
    candidate = data.draw(st.sampled_from([final[:cut], bytes(mutated), final + b",x=1"]))
    if candidate == final and client.password == "right":
        return  # the genuine exchange is the one that must succeed (checked below)
    _feed(server, [candidate])


def test_the_genuine_exchange_authenticates_and_a_replay_does_not() -> None:
    client = ScramClient("u", "right", "sha512")
    server = _server()
    final = client.final(server.evaluate(client.first()))
    assert client.server_signature_ok(server.evaluate(final))
    assert server.complete
    replay = _server()
    replay.evaluate(client.first())  # the same client nonce: a fresh server nonce
    _feed(replay, [final])


@settings(max_examples=50, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=100), min_size=1, max_size=4))
def test_wrong_proofs_are_refused(proofs: list[bytes]) -> None:
    for proof in proofs:
        client = ScramClient("u", "right", "sha512")
        server = _server()
        final = client.final(server.evaluate(client.first()))
        forged = final.rsplit(b",p=", 1)[0] + b",p=" + base64.b64encode(proof)
        if forged != final:
            _feed(server, [forged])


def _security() -> ListenerSecurity:
    config = Config(host="127.0.0.1", port=0)
    config.set("listeners", "SASL_PLAINTEXT://127.0.0.1:0")
    config.set("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512,OAUTHBEARER")
    config.set("listener.name.sasl_plaintext.plain.sasl.jaas.config", PLAIN_JAAS)

    class _Store:
        class scram:
            get = staticmethod(_lookup)

        token_credential = staticmethod(lambda token_id, mechanism: None)  # no delegation tokens

    return ListenerSecurity(listeners_of(config)[0], config, lambda: _Store)  # type: ignore[arg-type,return-value]


def _request(api_key: int, version: int, **fields: object) -> bytes:
    request = build_request(api_key, version, **fields)
    request.with_header(correlation_id=7, client_id="fuzz")
    return bytes(request.encode(header=True, framed=False))


_FRAMES = st.one_of(
    st.binary(max_size=64),
    st.builds(
        lambda m, v: _request(17, v, mechanism=m),
        st.sampled_from(["PLAIN", "SCRAM-SHA-512", "OAUTHBEARER", "X"]),
        st.integers(0, 1),
    ),
    st.builds(lambda b, v: _request(36, v, auth_bytes=b), st.binary(max_size=120), st.integers(0, 2)),
    st.just(_request(18, 0)),
    st.just(_request(3, 1, topics=[])),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_FRAMES, min_size=1, max_size=6))
def test_the_gate_only_refuses_and_never_authenticates_garbage(frames: list[bytes]) -> None:
    authenticated: list[str] = []
    gate = SaslGate(_security(), authenticated.append, "fuzz")
    for frame in frames:
        try:
            gate.frame(frame)
        except CloseConnection:
            break
    assert authenticated == []


def _metadata_closes(client: WireClient) -> bool:
    try:
        client.send(3, 1, topics=[])
    except OSError:  # closed already
        return True
    return client.recv_frame() is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(st.lists(st.binary(max_size=150), min_size=1, max_size=3), st.sampled_from(["SCRAM-SHA-512", "PLAIN"]))
def test_garbage_over_a_real_connection_is_refused_and_the_broker_serves_on(
    secure: SecureBroker, tokens: list[bytes], mechanism: str
) -> None:
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        client.send(17, 1, mechanism=mechanism)
        assert client.recv_frame() is not None
        for token in tokens:
            client.send(36, 1, auth_bytes=token)
            if client.recv_frame() is None:
                break
        assert _metadata_closes(client)  # never authenticated: Metadata closes the connection, if open
    with WireClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        client.send(17, 0, mechanism="SCRAM-SHA-512")
        assert client.recv_frame() is not None
        scram = ScramClient(SCRAM_USER, SCRAM_PASSWORD)
        client.send_raw(struct.pack(">i", len(scram.first())) + scram.first())  # v0: raw tokens
        server_first = client.recv_frame()
        assert server_first is not None
        final = scram.final(server_first)
        client.send_raw(struct.pack(">i", len(final)) + final)
        server_final = client.recv_frame()
        assert server_final is not None and scram.server_signature_ok(server_final)
        assert client.request(3, 1, topics=[]).brokers
