"""SCRAM credentials as Kafka stores them (RFC 5802 / 7677), and Kafka's rules for altering them.

A client sends a user's salt, iteration count and salted password (`Hi(password, salt, i)`, never the
password); the broker keeps the salt, the iteration count, `StoredKey = H(HMAC(SaltedPassword,
"Client Key"))` and `ServerKey = HMAC(SaltedPassword, "Server Key")`, which is what a SCRAM server
needs and not enough to log in as the user. Mechanisms: SCRAM-SHA-256 and SCRAM-SHA-512, 4096 to
16384 iterations.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from kafkito.broker.security.errors import SecurityError
from kafkito.protocol.errors import ErrorCode

MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
Record = dict[str, Any]


class ScramMechanism(IntEnum):
    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def mechanism_name(self) -> str:
        """The SASL mechanism name (`SCRAM-SHA-256`)."""
        return self.name.replace("_", "-")

    @property
    def hash_name(self) -> str:
        return {ScramMechanism.SCRAM_SHA_256: "sha256", ScramMechanism.SCRAM_SHA_512: "sha512"}[self]


def mechanism(code: int) -> ScramMechanism:
    """Kafka's `fromType`: a code this broker does not know reads as UNKNOWN."""
    return ScramMechanism(code) if code in ScramMechanism._value2member_map_ else ScramMechanism.UNKNOWN


def mechanism_named(name: str) -> ScramMechanism:
    """The mechanism of a SASL mechanism name (`SCRAM-SHA-512`); UNKNOWN for any other name."""
    for m in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
        if m.mechanism_name == name:
            return m
    return ScramMechanism.UNKNOWN


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What the broker keeps of one user's password for one mechanism (its repr hides the keys)."""

    salt: bytes = field(repr=False)
    stored_key: bytes = field(repr=False)
    server_key: bytes = field(repr=False)
    iterations: int


def salted_password(m: ScramMechanism, password: str, salt: bytes, iterations: int) -> bytes:
    """SCRAM's `Hi(password, salt, i)`: PBKDF2 with HMAC over the mechanism's hash."""
    return hashlib.pbkdf2_hmac(m.hash_name, password.encode("utf-8"), salt, iterations)


def credential(m: ScramMechanism, salt: bytes, salted: bytes, iterations: int) -> ScramCredential:
    """The stored credential of a salted password (the salted password itself is not kept)."""
    client_key = hmac.digest(salted, b"Client Key", m.hash_name)
    stored_key = hashlib.new(m.hash_name, client_key).digest()
    server_key = hmac.digest(salted, b"Server Key", m.hash_name)
    return ScramCredential(salt, stored_key, server_key, iterations)


def credential_from_password(
    m: ScramMechanism, password: str, iterations: int = MIN_ITERATIONS, salt: bytes | None = None
) -> ScramCredential:
    """A credential made from a clear password (a tool adding a user, a test), with a random salt."""
    salt = os.urandom(32) if salt is None else salt
    return credential(m, salt, salted_password(m, password, salt, iterations), iterations)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True, slots=True)
class Upsertion:
    """AlterUserScramCredentials' ScramCredentialUpsertion: what the client computed, not the password."""

    name: str
    mechanism: int
    iterations: int
    salt: bytes = field(repr=False)
    salted_password: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class Deletion:
    name: str
    mechanism: int


@dataclass(frozen=True, slots=True)
class UserDescription:
    """One DescribeUserScramCredentials result: a user's mechanisms and iteration counts, or an error."""

    user: str
    error: SecurityError | None
    credentials: list[tuple[ScramMechanism, int]]


_TWICE = "A user credential cannot be altered twice in the same request"


class ScramCredentials:
    """Every user's credentials by mechanism, changed by replaying credential records."""

    def __init__(self) -> None:
        self.by_user: dict[str, dict[ScramMechanism, ScramCredential]] = {}

    def get(self, user: str, m: ScramMechanism) -> ScramCredential | None:
        """A user's credential for one mechanism (what a SCRAM server exchange needs), or None."""
        return self.by_user.get(user, {}).get(m)

    def replay(self, record: Record) -> None:
        user, m = record["name"], ScramMechanism(record["mechanism"])
        if record["type"] == "RemoveUserScramCredentialRecord":
            mechanisms = self.by_user.get(user, {})
            mechanisms.pop(m, None)
            if not mechanisms:
                self.by_user.pop(user, None)
            return
        self.by_user.setdefault(user, {})[m] = ScramCredential(
            base64.b64decode(record["salt"]),
            base64.b64decode(record["stored_key"]),
            base64.b64decode(record["server_key"]),
            int(record["iterations"]),
        )

    def describe(self, users: Sequence[str] | None) -> list[UserDescription]:
        """Every user's (no users named) or the named users', each once; a user named twice: an error."""
        if not users:
            return [self._describe_one(u) for u in sorted(self.by_user)]
        counts: dict[str, int] = {}
        for u in users:
            counts[u] = counts.get(u, 0) + 1
        out = []
        for u, count in counts.items():
            if count > 1:
                message = f"Cannot describe the SCRAM credentials of user {u} twice in one request"
                out.append(UserDescription(u, SecurityError(ErrorCode.DUPLICATE_RESOURCE, message), []))
            else:
                out.append(self._describe_one(u))
        return out

    def _describe_one(self, user: str) -> UserDescription:
        mechanisms = self.by_user.get(user)
        if not mechanisms:
            message = f"Attempt to describe the credentials of a user that has none: {user}"
            return UserDescription(user, SecurityError(ErrorCode.RESOURCE_NOT_FOUND, message), [])
        return UserDescription(user, None, [(m, c.iterations) for m, c in sorted(mechanisms.items())])

    def plan(
        self, deletions: Sequence[Deletion], upsertions: Sequence[Upsertion]
    ) -> tuple[list[Record], list[tuple[str, SecurityError | None]]]:
        """The records an alteration writes and each user's result (deletions, upsertions, errors).

        As Kafka: one operation per user per request (a second one fails the user with
        DUPLICATE_RESOURCE, and neither applies); a user whose first operation failed ignores the rest.
        """
        errors: dict[str, SecurityError] = {}
        ops: dict[str, Deletion | Upsertion] = {}
        all_ops: list[Deletion | Upsertion] = [*deletions, *upsertions]
        for op in all_ops:
            if op.name in errors:
                continue
            if op.name in ops:
                del ops[op.name]
                errors[op.name] = SecurityError(ErrorCode.DUPLICATE_RESOURCE, _TWICE)
                continue
            try:
                self._validate(op)
            except SecurityError as e:
                errors[op.name] = e
                continue
            ops[op.name] = op
        records = [self._record(op) for op in ops.values() if isinstance(op, Deletion)]
        records += [self._record(op) for op in ops.values() if isinstance(op, Upsertion)]
        results: list[tuple[str, SecurityError | None]] = [(r["name"], None) for r in records]
        results += list(errors.items())
        return records, results

    def _validate(self, op: Deletion | Upsertion) -> None:
        if not op.name:
            raise SecurityError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        m = mechanism(op.mechanism)
        if m == ScramMechanism.UNKNOWN:
            raise SecurityError(ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        if isinstance(op, Deletion):
            if self.get(op.name, m) is None:
                message = "Attempt to delete a user credential that does not exist"
                raise SecurityError(ErrorCode.RESOURCE_NOT_FOUND, message)
        elif op.iterations < MIN_ITERATIONS:
            raise SecurityError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
        elif op.iterations > MAX_ITERATIONS:
            raise SecurityError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")

    @staticmethod
    def _record(op: Deletion | Upsertion) -> Record:
        if isinstance(op, Deletion):
            return {"type": "RemoveUserScramCredentialRecord", "name": op.name, "mechanism": op.mechanism}
        m = ScramMechanism(op.mechanism)
        return credential_record(op.name, m, credential(m, op.salt, op.salted_password, op.iterations))


def credential_record(user: str, m: ScramMechanism, c: ScramCredential) -> Record:
    """The UserScramCredentialRecord of a stored credential (a checkpoint writes these)."""
    return {
        "type": "UserScramCredentialRecord",
        "name": user,
        "mechanism": int(m),
        "salt": _b64(c.salt),
        "stored_key": _b64(c.stored_key),
        "server_key": _b64(c.server_key),
        "iterations": c.iterations,
    }
