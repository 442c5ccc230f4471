"""SCRAM credentials in the security store: stored as Kafka stores them, and Kafka's alteration rules."""

from __future__ import annotations

import base64
import hashlib
import hmac
from pathlib import Path

import pytest

from kafkito.broker.security.errors import SecurityError
from kafkito.broker.security.scram import (
    Deletion,
    ScramMechanism,
    Upsertion,
    credential,
    credential_from_password,
    mechanism_named,
    salted_password,
)
from kafkito.broker.security.store import SecurityStore
from kafkito.protocol.errors import ErrorCode

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512


def test_stored_and_server_keys_verify_the_rfc_7677_exchange() -> None:
    """RFC 7677's SCRAM-SHA-256 example: the stored key checks the client's proof, the server key
    makes the server signature, and neither holds the salted password."""
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    c = credential(SHA256, salt, salted_password(SHA256, "pencil", salt, 4096), 4096)
    nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    auth = (
        f"n=user,r=rOprNGfwEbeRWgbNEkqO,r={nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r={nonce}".encode()
    )
    proof = base64.b64decode("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    client_key = bytes(a ^ b for a, b in zip(proof, hmac.digest(c.stored_key, auth, "sha256"), strict=True))
    assert hashlib.sha256(client_key).digest() == c.stored_key
    assert (
        base64.b64encode(hmac.digest(c.server_key, auth, "sha256"))
        == b"6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    )
    assert repr(c) == "ScramCredential(iterations=4096)"


def test_mechanism_names() -> None:
    assert SHA256.mechanism_name == "SCRAM-SHA-256"
    assert mechanism_named("SCRAM-SHA-512") == SHA512
    assert mechanism_named("PLAIN") == ScramMechanism.UNKNOWN


def upsert(name: str, m: int = SHA256, iterations: int = 4096, password: str = "pw") -> Upsertion:
    salt = b"salt-" + name.encode()
    salted = salted_password(ScramMechanism(m), password, salt, iterations) if m in (1, 2) else b"x"
    return Upsertion(name, m, iterations, salt, salted)


@pytest.fixture
def store(tmp_path: Path) -> SecurityStore:
    return SecurityStore(tmp_path).load()


def test_upsert_describe_delete(store: SecurityStore) -> None:
    assert store.alter_scram([], [upsert("alice"), upsert("bob", SHA512, 8192)]) == [
        ("alice", None),
        ("bob", None),
    ]
    assert store.alter_scram([], [upsert("alice", SHA512, 16384)]) == [("alice", None)]
    alice = store.scram.get("alice", SHA256)
    assert alice == credential_from_password(SHA256, "pw", 4096, b"salt-alice")
    [a, b] = store.describe_scram(None)
    assert (a.user, a.error, a.credentials) == ("alice", None, [(SHA256, 4096), (SHA512, 16384)])
    assert (b.user, b.credentials) == ("bob", [(SHA512, 8192)])
    assert store.alter_scram([Deletion("alice", SHA256)], []) == [("alice", None)]
    assert store.scram.get("alice", SHA256) is None
    assert [d.credentials for d in store.describe_scram(["alice"])] == [[(SHA512, 16384)]]


def errors(results: list[tuple[str, SecurityError | None]]) -> dict[str, tuple[ErrorCode, str] | None]:
    return {user: None if e is None else (e.code, e.message) for user, e in results}


def test_alteration_errors_as_kafka(store: SecurityStore) -> None:
    store.alter_scram([], [upsert("carol")])
    got = errors(
        store.alter_scram(
            [Deletion("nobody", SHA256), Deletion("dave", 9), Deletion("carol", SHA256)],
            [
                upsert("", SHA256),
                upsert("few", iterations=4095),
                upsert("many", iterations=16385),
                upsert("edge", iterations=16384),
                upsert("carol", SHA512),
                upsert("twice"),
                upsert("twice", SHA512),
                upsert("twice"),
            ],
        )
    )
    assert got == {
        "nobody": (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "dave": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "few": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "many": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        "edge": None,
        "carol": (
            ErrorCode.DUPLICATE_RESOURCE,
            "A user credential cannot be altered twice in the same request",
        ),
        "twice": (
            ErrorCode.DUPLICATE_RESOURCE,
            "A user credential cannot be altered twice in the same request",
        ),
    }
    # The duplicated users' operations did not apply: carol keeps her credential, twice has none.
    assert store.scram.get("carol", SHA256) is not None and store.scram.get("carol", SHA512) is None
    assert "twice" not in store.scram.by_user and "edge" in store.scram.by_user


def test_describe_errors(store: SecurityStore) -> None:
    store.alter_scram([], [upsert("alice")])
    got = {
        d.user: (d.error.code if d.error else None, d.credentials)
        for d in store.describe_scram(["alice", "ghost", "bob", "bob"])
    }
    assert got == {
        "alice": (None, [(SHA256, 4096)]),
        "ghost": (ErrorCode.RESOURCE_NOT_FOUND, []),
        "bob": (ErrorCode.DUPLICATE_RESOURCE, []),
    }
    assert store.describe_scram([]) == store.describe_scram(None)


def test_the_salted_password_is_never_stored(store: SecurityStore, tmp_path: Path) -> None:
    u = upsert("alice", password="hunter2")
    store.alter_scram([], [u])
    store.close()
    written = b"".join(p.read_bytes() for p in tmp_path.glob("security-*"))
    assert base64.b64encode(u.salted_password) not in written and u.salted_password not in written
    assert b"hunter2" not in written
