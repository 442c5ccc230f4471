"""Delegation token rules Kafka 4.4 applies that the conformance pair cannot show (its reference runs
with a secret and no authorizer): DELEGATION_TOKEN_AUTH_DISABLED without `delegation.token.secret.key`,
the CREATE_TOKENS / DESCRIBE_TOKENS ACLs on USER and DESCRIBE on DELEGATION_TOKEN, and the sweep of
expired tokens on the broker clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafkito.broker.auth.users import store_add
from kafkito.broker.security.scram import ScramMechanism
from kafkito.protocol.errors import ErrorCode
from tests.conftest import make_config
from tests.security.sasl_wire import scram_login
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

E = ErrorCode
USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
CREATE, RENEW, DESCRIBE, CREATE_ACLS = 38, 39, 41, 30
USER, DELEGATION_TOKEN = 7, 6
DESCRIBE_OP, CREATE_TOKENS, DESCRIBE_TOKENS = 8, 13, 14
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def start(data_dir: Path, **props: str) -> ThreadBroker:
    store_add(data_dir, "admin", USERS["admin"], [ScramMechanism.SCRAM_SHA_512], 4096)
    for user in ("alice", "bob"):
        store_add(data_dir, user, USERS[user], [ScramMechanism.SCRAM_SHA_512], 4096)
    config = make_config(data_dir)
    config.update({"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                   "sasl.enabled.mechanisms": "SCRAM-SHA-512", **props})  # fmt: skip
    return ThreadBroker(config).start()


def client(broker: ThreadBroker, user: str) -> WireClient:
    assert broker.broker is not None
    c = WireClient(f"127.0.0.1:{broker.broker.nodes.listener_bound[1, 'SASL_PLAINTEXT']}")
    assert scram_login(c, user, USERS[user]).error_code == 0
    return c


def create(c: WireClient, owner: str | None = None) -> Any:
    return c.request(CREATE, 3, owner_principal_type="User" if owner else None, owner_principal_name=owner,
                     renewers=[], max_lifetime_ms=-1)  # fmt: skip


def allow(c: WireClient, principal: str, op: int, resource_type: int, name: str) -> None:
    acl = dict(resource_type=resource_type, resource_name=name, resource_pattern_type=3, principal=principal,
               host="*", operation=op, permission_type=3)  # fmt: skip
    assert c.request(CREATE_ACLS, 3, creations=[acl]).results[0].error_code == 0


def test_without_a_secret_every_token_api_is_disabled(tmp_path: Path) -> None:
    broker = start(tmp_path)
    try:
        with client(broker, "alice") as alice:
            created = create(alice)
            assert created.error_code == E.DELEGATION_TOKEN_AUTH_DISABLED
            assert (created.principal_name, created.token_requester_principal_name) == ("alice", "alice")
            assert (created.issue_timestamp_ms, created.token_id, created.hmac) == (0, "", b"")
            assert alice.request(DESCRIBE, 3, owners=None).error_code == E.DELEGATION_TOKEN_AUTH_DISABLED
            renewed = alice.request(RENEW, 2, hmac=b"x", renew_period_ms=-1)
            assert (renewed.error_code, renewed.expiry_timestamp_ms) == (E.DELEGATION_TOKEN_AUTH_DISABLED, 0)
    finally:
        broker.stop()


def test_acls_decide_tokens_for_others_and_who_sees_them(tmp_path: Path) -> None:
    broker = start(tmp_path, **{"delegation.token.secret.key": "s",
                                "authorizer.class.name": STANDARD_AUTHORIZER,
                                "super.users": "User:admin"})  # fmt: skip
    try:
        with client(broker, "admin") as admin, client(broker, "alice") as alice, client(broker, "bob") as bob:
            assert create(alice, owner="carol").error_code == E.DELEGATION_TOKEN_AUTHORIZATION_FAILED
            allow(admin, "User:alice", CREATE_TOKENS, USER, "User:carol")
            carols = create(alice, owner="carol")
            assert carols.error_code == E.NONE and carols.principal_name == "carol"
            alices = create(alice)
            assert alices.error_code == E.NONE

            def seen_by_bob() -> set[str]:
                return {t.token_id for t in bob.request(DESCRIBE, 3, owners=None).tokens}

            assert seen_by_bob() == set()
            allow(admin, "User:bob", DESCRIBE_OP, DELEGATION_TOKEN, alices.token_id)
            assert seen_by_bob() == {alices.token_id}
            allow(admin, "User:bob", DESCRIBE_TOKENS, USER, "User:carol")
            assert seen_by_bob() == {alices.token_id, carols.token_id}
            requested = {t.token_id for t in alice.request(DESCRIBE, 3, owners=None).tokens}
            assert requested == {alices.token_id, carols.token_id}  # the requester sees what it asked for
    finally:
        broker.stop()


def test_an_expired_token_is_listed_until_the_sweep_removes_it(tmp_path: Path) -> None:
    broker = start(tmp_path, **{"delegation.token.secret.key": "s",
                                "delegation.token.expiry.time.ms": "60000",
                                "delegation.token.expiry.check.interval.ms": "100000"})  # fmt: skip
    try:
        assert broker.broker is not None
        steering = broker.broker.steering
        with client(broker, "alice") as alice:
            token = create(alice)
            broker.call(lambda: steering.advance(70_000))  # past its expiry, before the sweep
            assert [t.token_id for t in alice.request(DESCRIBE, 3, owners=None).tokens] == [token.token_id]
            renewed = alice.request(RENEW, 2, hmac=token.hmac, renew_period_ms=-1)
            assert renewed.error_code == E.DELEGATION_TOKEN_EXPIRED
            broker.call(lambda: steering.advance(30_000))  # the sweep
            assert alice.request(DESCRIBE, 3, owners=None).tokens == []
            gone = alice.request(RENEW, 2, hmac=token.hmac, renew_period_ms=-1)
            assert gone.error_code == E.DELEGATION_TOKEN_NOT_FOUND
    finally:
        broker.stop()
