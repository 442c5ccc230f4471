"""SASL OAUTHBEARER (RFC 7628) with unsecured JWTs, validated as Kafka's default unsecured validator does.

The client sends `n,[a=authzid],` then `\\x01auth=Bearer <jwt>\\x01[key=value\\x01]...\\x01`. The token's
header must say `"alg":"none"` and its signature be empty; the principal claim (`sub` by default) must
be a non-empty string, `exp` a number in the future (`iat`, when present, not in the future), both
within the allowed clock skew; each required scope must be in the scope claim. A refused token is
answered with a JSON error challenge; the client acknowledges with `\\x01` and the exchange fails.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkito.broker.auth.mechanisms import AuthenticationFailed


@dataclass(frozen=True, slots=True)
class UnsecuredValidator:
    """Kafka's `unsecuredValidator*` JAAS options."""

    principal_claim: str = "sub"
    scope_claim: str = "scope"
    required_scope: tuple[str, ...] = ()
    clock_skew_ms: int = 0

    @staticmethod
    def from_options(options: Mapping[str, str]) -> UnsecuredValidator:
        scope = options.get("unsecuredValidatorRequiredScope", "")
        try:
            skew = int(options.get("unsecuredValidatorAllowableClockSkewMs", "0"))
        except ValueError:
            skew = -1
        if skew < 0:
            raise ValueError("unsecuredValidatorAllowableClockSkewMs must be a non-negative integer")
        return UnsecuredValidator(
            options.get("unsecuredValidatorPrincipalClaimName", "sub").strip() or "sub",
            options.get("unsecuredValidatorScopeClaimName", "scope").strip() or "scope",
            tuple(s.strip() for s in scope.split(",") if s.strip()),
            skew,
        )


class InvalidToken(Exception):
    def __init__(self, status: str, detail: str, scope: str | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.scope = scope

    def challenge(self) -> bytes:
        body: dict[str, str] = {"status": self.status}
        if self.scope is not None:
            body["scope"] = self.scope
        return json.dumps(body).encode()


def _b64url_json(part: str) -> dict[str, Any]:
    try:
        data = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidToken("invalid_token", "the token is not base64url JSON") from None
    if not isinstance(data, dict):
        raise InvalidToken("invalid_token", "the token's parts must be JSON objects")
    return data


def _number(claims: Mapping[str, Any], name: str, required: bool) -> float | None:
    value = claims.get(name)
    if value is None:
        if required:
            raise InvalidToken("invalid_token", f"Required claim missing: {name}")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidToken("invalid_token", f"The claim {name} is not a number")
    return float(value)


def validate(token: str, v: UnsecuredValidator, now_ms: float) -> tuple[str, float]:
    """The principal and the expiry (epoch ms) of a valid unsecured JWT; InvalidToken otherwise."""
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("invalid_token", "the token must have three dot-separated parts")
    header, claims = _b64url_json(parts[0]), _b64url_json(parts[1])
    if header.get("alg") != "none" or parts[2]:
        raise InvalidToken("invalid_token", "an unsecured token must have alg=none and no signature")
    principal = claims.get(v.principal_claim)
    if not isinstance(principal, str) or not principal.strip():
        raise InvalidToken("invalid_token", f"Required claim missing or not a string: {v.principal_claim}")
    exp = _number(claims, "exp", True)
    assert exp is not None
    iat = _number(claims, "iat", False)
    if exp * 1000 + v.clock_skew_ms <= now_ms:
        raise InvalidToken("invalid_token", "The indicated time (exp) is in the past")
    if iat is not None and iat * 1000 - v.clock_skew_ms > now_ms:
        raise InvalidToken("invalid_token", "The indicated time (iat) is in the future")
    scope = claims.get(v.scope_claim, [])
    scopes = scope.split() if isinstance(scope, str) else [s for s in scope if isinstance(s, str)]
    missing = [s for s in v.required_scope if s not in scopes]
    if missing:
        raise InvalidToken("insufficient_scope", f"The token lacks the required scope {missing}",
                           " ".join(v.required_scope))  # fmt: skip
    return principal, exp * 1000


class OAuthBearerServer:
    mechanism = "OAUTHBEARER"

    def __init__(self, validator: UnsecuredValidator, wall_ms: Callable[[], float] | None = None) -> None:
        self._validator = validator
        self._wall_ms = wall_ms or (lambda: time.time() * 1000)
        self.complete = False
        self.authorization_id = ""
        self.lifetime_ms: int | None = None
        self._error: InvalidToken | None = None

    def evaluate(self, token: bytes) -> bytes:
        if self._error is not None:  # the client's acknowledgement of our error challenge
            raise AuthenticationFailed(f"Authentication failed: {self._error.detail}")
        if self.complete:
            raise AuthenticationFailed("Authentication failed: OAUTHBEARER exchange already completed")
        jwt, authzid = self._parse(token)
        now = self._wall_ms()
        try:
            principal, expiry_ms = validate(jwt, self._validator, now)
        except InvalidToken as e:
            self._error = e
            return e.challenge()
        if authzid and authzid != principal:
            raise AuthenticationFailed(
                "Authentication failed: the authorization id differs from the token's principal", principal
            )
        self.authorization_id = principal
        self.lifetime_ms = max(0, int(expiry_ms - now))
        self.complete = True
        return b""

    @staticmethod
    def _parse(token: bytes) -> tuple[str, str]:
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise AuthenticationFailed("Invalid OAUTHBEARER client response: not UTF-8") from None
        gs2, sep, rest = text.partition("\x01")
        if not sep or not rest.endswith("\x01\x01") or not gs2.startswith("n,") or not gs2.endswith(","):
            raise AuthenticationFailed("Invalid OAUTHBEARER client response")
        authzid = gs2[2:-1]
        if authzid and not authzid.startswith("a="):
            raise AuthenticationFailed("Invalid OAUTHBEARER client response: bad authorization id")
        pairs = dict(kv.partition("=")[::2] for kv in rest[:-2].split("\x01"))
        auth = pairs.get("auth", "")
        scheme, _, jwt = auth.partition(" ")
        if scheme.lower() != "bearer" or not jwt.strip():
            raise AuthenticationFailed("Invalid OAUTHBEARER client response: no auth=Bearer token")
        return jwt.strip(), authzid[2:]
