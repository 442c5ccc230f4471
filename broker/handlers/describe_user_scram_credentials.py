"""DescribeUserScramCredentials (50): each user's SCRAM mechanisms and iteration counts.

Null or no users: every user with a credential. A user without one is RESOURCE_NOT_FOUND, a user named
twice DUPLICATE_RESOURCE. Salts and keys are never sent. v0 is flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext

API_KEY = 50
VERSIONS = (0, 0)


class UserName(Protocol):
    name: str


class DescribeUserScramCredentialsRequest(Protocol):
    users: Sequence[UserName] | None


def handle(ctx: RequestContext, request: DescribeUserScramCredentialsRequest) -> Any:
    users = None if request.users is None else [u.name for u in request.users]
    results = [
        dict(
            user=d.user,
            error_code=0 if d.error is None else d.error.code,
            error_message=None if d.error is None else d.error.message,
            credential_infos=[dict(mechanism=int(m), iterations=i) for m, i in d.credentials],
        )
        for d in ctx.security.describe_scram(users)
    ]
    return ctx.response(throttle_time_ms=0, error_code=0, error_message=None, results=results)
