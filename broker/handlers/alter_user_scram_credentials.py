"""AlterUserScramCredentials (51): upsert (salt + salted password from the client) or delete credentials.

Kafka's rules: SCRAM-SHA-256 and -512 only (UNSUPPORTED_SASL_MECHANISM), 4096 to 16384 iterations and
a non-empty user name (UNACCEPTABLE_CREDENTIAL), deleting a credential that does not exist
(RESOURCE_NOT_FOUND), two operations on one user in a request (DUPLICATE_RESOURCE). The broker keeps
the stored and server keys, never the salted password; the answer comes once the change is durable.
v0 is flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.errors import SecurityError
from kafkito.broker.security.scram import Deletion, Upsertion

API_KEY = 51
VERSIONS = (0, 0)


class ScramCredentialDeletion(Protocol):
    name: str
    mechanism: int


class ScramCredentialUpsertion(Protocol):
    name: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes


class AlterUserScramCredentialsRequest(Protocol):
    deletions: Sequence[ScramCredentialDeletion]
    upsertions: Sequence[ScramCredentialUpsertion]


def handle(ctx: RequestContext, request: AlterUserScramCredentialsRequest) -> Any:
    results = ctx.security.alter_scram(
        [Deletion(d.name, d.mechanism) for d in request.deletions],
        [
            Upsertion(u.name, u.mechanism, u.iterations, bytes(u.salt), bytes(u.salted_password))
            for u in request.upsertions
        ],
    )
    return _answer(ctx, results)


async def _answer(ctx: RequestContext, results: list[tuple[str, SecurityError | None]]) -> Any:
    await ctx.security.synced()
    return ctx.response(
        throttle_time_ms=0,
        results=[
            dict(
                user=user,
                error_code=0 if e is None else e.code,
                error_message=None if e is None else e.message,
            )
            for user, e in results
        ],
    )
