"""The delegation token APIs against Kafka 4.4 over SASL_PLAINTEXT/SCRAM (they are refused on PLAINTEXT,
which the sweep compares): a pair of its own, both brokers with `delegation.token.secret.key` and a
SCRAM listener, users alice and bob made with AlterUserScramCredentials. Token ids, HMACs and times
are placeholders in the comparison; their differences (lifetime, expiry) are noted and compared."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from typing import Any

import pytest

from kafkito.broker.config import Config
from kafkito.broker.security.scram import ScramMechanism, salted_password
from tests.conformance.explained import unexplained
from tests.conformance.framework import Outcome, Scenario, Side, run_pair
from tests.conformance.report import RESULTS
from tests.security.sasl_wire import ScramClient, authenticate, handshake, scram_login
from tests.support.brokers import ThreadBroker
from tests.support.kafka_reference import COMPARED_PROPS, KafkaReference
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

SECRET = "conformance-token-secret"
TOKEN_PROPS = {**COMPARED_PROPS, "delegation.token.secret.key": SECRET}
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
CREATE, RENEW, EXPIRE, DESCRIBE, METADATA = 38, 39, 40, 41, 3
HOUR_MS = 3_600_000


@pytest.fixture(scope="module")
def token_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(Kafka's SASL_PLAINTEXT bootstrap, kafkito's), SCRAM users created on both."""
    ref = KafkaReference(TOKEN_PROPS, sasl=True).start()
    config = Config(host="127.0.0.1", port=0, log_dirs=str(tmp_path_factory.mktemp("kafkito-tokens")))
    config.update(TOKEN_PROPS)
    config.update(
        {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
         "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512"}
    )  # fmt: skip
    broker = ThreadBroker(config).start()
    assert broker.broker is not None
    ours = f"127.0.0.1:{broker.broker.nodes.listener_bound[1, 'SASL_PLAINTEXT']}"
    try:
        for plaintext, sasl in ((ref.bootstrap, f"127.0.0.1:{ref.sasl_port}"), (broker.bootstrap, ours)):
            _add_users(plaintext)
            wait_until(lambda s=sasl: _logs_in(s), 30, f"the SCRAM users on {sasl}")  # type: ignore[misc]
        yield f"127.0.0.1:{ref.sasl_port}", ours
    finally:
        broker.stop()
        ref.stop()


def _add_users(bootstrap: str) -> None:
    m = ScramMechanism.SCRAM_SHA_512
    upsertions = []
    for user, password in USERS.items():
        salt = os.urandom(16)
        upsertions.append(
            dict(name=user, mechanism=int(m), iterations=4096, salt=salt,
                 salted_password=salted_password(m, password, salt, 4096))
        )  # fmt: skip
    with WireClient(bootstrap) as c:
        answer = c.request(51, 0, deletions=[], upsertions=upsertions)
    assert all(r.error_code == 0 for r in answer.results), answer


def _logs_in(bootstrap: str) -> bool:
    with WireClient(bootstrap) as c:
        return all(scram_login(c, u, p).error_code == 0 for u, p in list(USERS.items())[:1])


def login(side: Side, user: str) -> str:
    """An authenticated connection of `user` on the side's SASL listener, named after the user."""
    client = WireClient(side.bootstrap, "conformance")
    assert scram_login(client, user, USERS[user]).error_code == 0
    side._conns[user] = client
    return user


class _TokenScram(ScramClient):
    def __init__(self, token_id: str, hmac: bytes) -> None:
        super().__init__(token_id, base64.b64encode(hmac).decode())
        self.first_bare += ",tokenauth=true"


def token_login(side: Side, name: str, token_id: str, hmac: bytes) -> int:
    """A connection authenticated with a token (SCRAM `tokenauth=true`); its last SASL error code."""
    client = WireClient(side.bootstrap, "conformance")
    scram = _TokenScram(token_id, hmac)
    handshake(client, "SCRAM-SHA-512")
    first = authenticate(client, scram.first())
    code = (
        int(first.error_code)
        if first.error_code
        else int(authenticate(client, scram.final(first.auth_bytes)).error_code)
    )
    side._conns[name] = client
    return code


def settle(side: Side, count: int) -> None:
    """Wait, unrecorded, until the broker lists `count` tokens (Kafka's brokers learn of a token's
    creation or removal from the metadata log, a little after the controller answered)."""

    def listed() -> bool:
        answer = side.conn("alice").request(DESCRIBE, 3, owners=None)
        return len(answer.tokens) == count

    side.wait_for(f"{count} tokens", listed)


def create(side: Side, conn: str, label: str, version: int = 3, **fields: Any) -> Any:
    request = dict(owner_principal_type=None, owner_principal_name=None, renewers=[], max_lifetime_ms=-1)
    r = side.request(CREATE, version, label, conn=conn, **{**request, **fields})
    if r is not None and r.error_code == 0:
        lifetimes = {
            "expiry - issue": r.expiry_timestamp_ms - r.issue_timestamp_ms,
            "max - issue": r.max_timestamp_ms - r.issue_timestamp_ms,
            "token id length": len(r.token_id),
            "hmac length": len(r.hmac),
        }
        side.note(f"{label}: lifetimes", lifetimes)
    return r


def renewer(name: str, kind: str = "User") -> dict[str, str]:
    return {"principal_type": kind, "principal_name": name}


def tokens(side: Side) -> None:
    alice, bob = login(side, "alice"), login(side, "bob")
    first = create(side, alice, "alice's, bob renews", renewers=[renewer("bob")])
    create(
        side, alice, "for carol (no authorizer)", owner_principal_type="User", owner_principal_name="carol"
    )
    create(side, alice, "a group as renewer", version=1, renewers=[renewer("g", "Group")])
    short = create(side, alice, "one hour at most", version=2, max_lifetime_ms=HOUR_MS)
    settle(side, 3)
    for v in (1, 3):
        side.request(DESCRIBE, v, "every owner", conn=alice, owners=None)
    side.request(DESCRIBE, 3, "no owner", conn=alice, owners=[])
    side.request(DESCRIBE, 3, "renewed by bob, asked by bob", conn=bob, owners=[renewer("bob")])
    side.request(DESCRIBE, 2, "carol's, asked by bob (none of his)", conn=bob, owners=[renewer("carol")])
    renewed = side.request(RENEW, 2, "by bob, a renewer", conn=bob, hmac=first.hmac, renew_period_ms=HOUR_MS)
    if renewed is not None and renewed.error_code == 0:
        side.note(
            "renewed: expiry - issue, at most",
            {"within": renewed.expiry_timestamp_ms - first.issue_timestamp_ms <= 2 * HOUR_MS},
        )
    side.request(RENEW, 1, "unknown hmac", conn=bob, hmac=b"nope", renew_period_ms=-1)
    side.request(RENEW, 2, "by bob, not a renewer", conn=bob, hmac=short.hmac, renew_period_ms=-1)
    side.request(EXPIRE, 2, "by bob, not a renewer", conn=bob, hmac=short.hmac, expiry_time_period_ms=-1)
    side.request(EXPIRE, 1, "unknown hmac", conn=alice, hmac=b"nope", expiry_time_period_ms=-1)
    side.request(EXPIRE, 2, "in an hour", conn=alice, hmac=first.hmac, expiry_time_period_ms=HOUR_MS)
    side.request(EXPIRE, 2, "at once", conn=alice, hmac=short.hmac, expiry_time_period_ms=-1)
    settle(side, 2)
    side.request(DESCRIBE, 3, "after expiring one", conn=alice, owners=[renewer("alice")])
    side.request(RENEW, 2, "an expired (removed) one", conn=alice, hmac=short.hmac, renew_period_ms=-1)
    side.note("token login", {"error": token_login(side, "token", first.token_id, first.hmac)})
    side.request(
        METADATA, 12, "as the token's owner", conn="token", topics=[], allow_auto_topic_creation=False
    )
    create(side, "token", "on a token-authenticated connection")
    side.request(DESCRIBE, 3, "on a token-authenticated connection", conn="token", owners=None)
    side.request(
        RENEW, 2, "on a token-authenticated connection", conn="token", hmac=first.hmac, renew_period_ms=-1
    )
    side.note("unknown token login", {"error": token_login(side, "bad", "AAAAAAAAAAAAAAAAAAAAAB", b"x")})


def test_delegation_tokens_as_kafka(token_pair: tuple[str, str]) -> None:
    kafka, kafkito = token_pair
    outcome: Outcome = run_pair(Scenario("delegation_tokens", "sequence", tokens), kafka, kafkito, {})
    RESULTS.append(outcome)
    left = unexplained(outcome)
    assert not left, f"{len(left)} unexplained differences:\n" + "\n".join(
        f"  {label}: {d.describe()}" for label, d in left
    )
