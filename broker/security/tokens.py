"""Delegation tokens as Kafka's controller keeps them (KIP-48): their information, their HMAC, the
SCRAM credentials a token authenticates with, and the rules of creating, renewing and expiring them.

A token is its id (a random Kafka `Uuid` as text), owner, requester, renewers and three epoch-ms
times: issued, expiry (moved by renew and expire) and max (issue + lifetime, never moved). Its HMAC is
HmacSHA512 over the token id keyed with `delegation.token.secret.key`, so it is never stored: it is
computed again from the secret after a restart, as Kafka does. The password a client authenticates
with over SCRAM (`tokenauth=true`) is that HMAC in base64; the credential built from it (4096
iterations, a fresh salt per broker run) is made on first use.

Records, named as in Kafka's metadata log: DelegationTokenRecord (the whole token, written again on
each renew or expire) and RemoveDelegationTokenRecord. An expired token stays until the periodic
sweep (`delegation.token.expiry.check.interval.ms`) removes it; only then does it stop
authenticating, as in Kafka.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kafkito.broker.security.scram import (
    MIN_ITERATIONS,
    ScramCredential,
    ScramMechanism,
    credential_from_password,
)
from kafkito.protocol.errors import ErrorCode

Record = dict[str, Any]
USER_TYPE = "User"


def split_principal(principal: str) -> tuple[str, str]:
    """`User:alice` -> ("User", "alice"), as Kafka's KafkaPrincipal.fromString splits it."""
    kind, sep, name = principal.partition(":")
    return (kind, name) if sep else ("", principal)


def new_token_id() -> str:
    """A random Kafka `Uuid` as its text: 16 bytes in URL-safe base64 without padding, never
    starting with '-' (Kafka's Uuid.randomUuid draws again then)."""
    while True:
        text = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
        if not text.startswith("-") and text != "AAAAAAAAAAAAAAAAAAAAAA":
            return text


def token_hmac(token_id: str, secret: str) -> bytes:
    """Kafka's token HMAC: HmacSHA512 over the id's UTF-8 bytes, keyed with the secret's."""
    return hmac.digest(secret.encode("utf-8"), token_id.encode("utf-8"), hashlib.sha512)


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """Kafka's TokenInformation: principals as `Type:name`, times in epoch ms."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    max_ms: int
    expiry_ms: int

    def owner_or_renewer(self, principal: str) -> bool:
        """Kafka's ownerOrRenewer: the owner, the requester or a renewer."""
        return principal in (self.owner, self.requester) or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_ms < now_ms or self.expiry_ms < now_ms

    def to_record(self) -> Record:
        return {
            "type": "DelegationTokenRecord",
            "token_id": self.token_id,
            "owner": self.owner,
            "requester": self.requester,
            "renewers": list(self.renewers),
            "issue_timestamp": self.issue_ms,
            "max_timestamp": self.max_ms,
            "expiration_timestamp": self.expiry_ms,
        }

    @classmethod
    def from_record(cls, r: Record) -> TokenInfo:
        return cls(
            str(r["token_id"]), str(r["owner"]), str(r["requester"]), tuple(r["renewers"]),
            int(r["issue_timestamp"]), int(r["max_timestamp"]), int(r["expiration_timestamp"]),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class TokenLimits:
    """The delegation.token.* properties the controller applies."""

    secret: str | None  # None or empty: tokens are disabled
    max_lifetime_ms: int = 604800000
    expiry_time_ms: int = 86400000

    @property
    def enabled(self) -> bool:
        return bool(self.secret)


@dataclass(frozen=True, slots=True)
class Created:
    """A created token with its HMAC, or the error the creation failed with (the token then None)."""

    error: ErrorCode
    token: TokenInfo | None = None
    hmac: bytes = b""


def _remove(token_id: str) -> Record:
    return {"type": "RemoveDelegationTokenRecord", "token_id": token_id}


class DelegationTokens:
    """Every live token by id, changed by replaying token records; plans changes as records."""

    def __init__(self) -> None:
        self.by_id: dict[str, TokenInfo] = {}
        self._credentials: dict[tuple[str, ScramMechanism], ScramCredential] = {}

    def __len__(self) -> int:
        return len(self.by_id)

    def replay(self, record: Record) -> None:
        token_id = str(record["token_id"])
        if record["type"] == "RemoveDelegationTokenRecord":
            self.by_id.pop(token_id, None)
            for m in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
                self._credentials.pop((token_id, m), None)
        else:  # a new token, or one renewed or expired (its HMAC, so its credential, stands)
            self.by_id[token_id] = TokenInfo.from_record(record)

    def records(self) -> Iterable[Record]:
        """The live tokens as records (what a checkpoint holds)."""
        return (t.to_record() for t in self.by_id.values())

    def by_hmac(self, mac: bytes, secret: str) -> TokenInfo | None:
        for token in self.by_id.values():
            if hmac.compare_digest(token_hmac(token.token_id, secret), mac):
                return token
        return None

    def credential(
        self, token_id: str, m: ScramMechanism, secret: str | None
    ) -> tuple[ScramCredential, str] | None:
        """The SCRAM credential a token authenticates with and its owner's name, or None (no such token
        or tokens disabled)."""
        token = self.by_id.get(token_id)
        if token is None or not secret or m == ScramMechanism.UNKNOWN:
            return None
        cached = self._credentials.get((token_id, m))
        if cached is None:
            password = base64.b64encode(token_hmac(token_id, secret)).decode()
            cached = self._credentials[token_id, m] = credential_from_password(m, password, MIN_ITERATIONS)
        return cached, split_principal(token.owner)[1]

    # -- the controller's rules -------------------------------------------------------------------

    def plan_create(
        self,
        owner: str,
        requester: str,
        renewers: Sequence[str],
        max_lifetime_ms: int,
        limits: TokenLimits,
        now_ms: int,
    ) -> tuple[list[Record], Created]:
        if not limits.enabled:
            return [], Created(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED)
        if any(split_principal(r)[0] != USER_TYPE for r in renewers):
            return [], Created(ErrorCode.INVALID_PRINCIPAL_TYPE)
        lifetime = limits.max_lifetime_ms
        if max_lifetime_ms > 0:
            lifetime = min(lifetime, max_lifetime_ms)
        max_ms = now_ms + lifetime
        expiry_ms = min(max_ms, now_ms + limits.expiry_time_ms)
        token_id = new_token_id()
        while token_id in self.by_id:
            token_id = new_token_id()
        token = TokenInfo(token_id, owner, requester, tuple(renewers), now_ms, max_ms, expiry_ms)
        assert limits.secret is not None
        return [token.to_record()], Created(ErrorCode.NONE, token, token_hmac(token_id, limits.secret))

    def _renewable(
        self, mac: bytes, principal: str, limits: TokenLimits, now_ms: int
    ) -> TokenInfo | ErrorCode:
        if not limits.enabled:
            return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
        assert limits.secret is not None
        token = self.by_hmac(mac, limits.secret)
        if token is None:
            return ErrorCode.DELEGATION_TOKEN_NOT_FOUND
        if token.expired(now_ms):
            return ErrorCode.DELEGATION_TOKEN_EXPIRED
        if principal != token.owner and principal not in token.renewers:
            return ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
        return token

    def plan_renew(
        self, mac: bytes, renew_period_ms: int, principal: str, limits: TokenLimits, now_ms: int
    ) -> tuple[list[Record], ErrorCode, int]:
        """The records, the error and the new expiry time (0 on an error, as Kafka's controller)."""
        token = self._renewable(mac, principal, limits, now_ms)
        if isinstance(token, ErrorCode):
            return [], token, 0
        period = limits.expiry_time_ms
        if renew_period_ms > 0:
            period = min(period, renew_period_ms)
        expiry = min(token.max_ms, now_ms + period)
        return [replace(token, expiry_ms=expiry).to_record()], ErrorCode.NONE, expiry

    def plan_expire(
        self, mac: bytes, expiry_period_ms: int, principal: str, limits: TokenLimits, now_ms: int
    ) -> tuple[list[Record], ErrorCode, int]:
        """As `plan_renew`; a negative period removes the token at once (answered now + the period, as
        Kafka 4.4 answers it)."""
        token = self._renewable(mac, principal, limits, now_ms)
        if isinstance(token, ErrorCode):
            return [], token, 0
        expiry = min(token.max_ms, now_ms + expiry_period_ms)
        if expiry_period_ms < 0:
            return [_remove(token.token_id)], ErrorCode.NONE, expiry
        return [replace(token, expiry_ms=expiry).to_record()], ErrorCode.NONE, expiry

    def plan_sweep(self, now_ms: int) -> list[Record]:
        """RemoveDelegationTokenRecords of every token past its expiry or max time."""
        return [_remove(t.token_id) for t in self.by_id.values() if t.expired(now_ms)]

    def matching(self, eligible: Callable[[TokenInfo], bool]) -> list[TokenInfo]:
        return [t for t in self.by_id.values() if eligible(t)]
