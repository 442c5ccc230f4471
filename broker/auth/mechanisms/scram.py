"""SCRAM-SHA-256 and SCRAM-SHA-512 servers (RFC 5802, RFC 7677) over the security store's credentials.

client-first `n,[a=authzid],n=user,r=cnonce[,ext]` -> server-first `r=cnonce+snonce,s=salt,i=iterations`;
client-final `c=<b64 gs2 header>,r=nonce,p=proof` -> server-final `v=<server signature>`. The proof is
checked against StoredKey (`H(proof XOR HMAC(StoredKey, AuthMessage)) == StoredKey`), so the broker
never holds a password. A fresh server nonce per exchange makes a replayed client-final fail.

With the extension `tokenauth=true` in the client-first message (KIP-48) the user is a delegation
token's id and the password its HMAC in base64: the credential is the token's, and the connection
authenticates as the token's owner (`token_authenticated`, so it may not ask for tokens itself).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Callable

from kafkito.broker.auth.mechanisms import AuthenticationFailed
from kafkito.broker.security.scram import ScramCredential, ScramMechanism

_INVALID = "Authentication failed: Invalid user credentials"
TokenCredentialOf = Callable[[str, ScramMechanism], tuple[ScramCredential, str] | None]


def _unescape(name: str) -> str:
    if "=" in name.replace("=2C", "").replace("=3D", ""):
        raise AuthenticationFailed("Invalid SCRAM username: bad escape")
    return name.replace("=2C", ",").replace("=3D", "=")


def _attributes(message: str) -> list[tuple[str, str]]:
    out = []
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise AuthenticationFailed("Invalid SCRAM message: malformed attribute")
        out.append((part[0], part[2:]))
    return out


def _token_authentication(extensions: list[str]) -> bool:
    """Whether the client-first message's extensions say `tokenauth=true` (Kafka's ScramExtensions
    reads the value as Boolean.parseBoolean does)."""
    for ext in extensions:
        key, _, value = ext.partition("=")
        if key == "tokenauth":
            return value.lower() == "true"
    return False


class ScramServer:
    def __init__(
        self,
        mechanism: ScramMechanism,
        credential_of: Callable[[str, ScramMechanism], ScramCredential | None],
        token_credential_of: TokenCredentialOf | None = None,
    ) -> None:
        self.mechanism = mechanism.mechanism_name
        self._m = mechanism
        self._credential_of = credential_of
        self._token_credential_of = token_credential_of
        self.token_authenticated = False
        self._step = 0
        self.complete = False
        self.authorization_id = ""
        self.lifetime_ms: int | None = None
        self._gs2 = ""
        self._first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._credential: ScramCredential | None = None
        self._user = ""
        self._owner = ""  # who the exchange authenticates: the user, or a token's owner

    def evaluate(self, token: bytes) -> bytes:
        try:
            message = token.decode("utf-8")
        except UnicodeDecodeError:
            raise AuthenticationFailed("Invalid SCRAM message: not UTF-8", self._user or None) from None
        if self._step == 0:
            self._step = 1
            return self._client_first(message).encode()
        if self._step == 1:
            self._step = 2
            return self._client_final(message).encode()
        raise AuthenticationFailed("Authentication failed: SCRAM exchange already completed", self._user)

    def _client_first(self, message: str) -> str:
        flag, sep, rest = message.partition(",")
        authzid, sep2, bare = rest.partition(",")
        if not sep or not sep2 or flag not in ("n", "y"):
            raise AuthenticationFailed(
                "Invalid SCRAM client-first message (channel binding is not supported)"
            )
        if authzid and not authzid.startswith("a="):
            raise AuthenticationFailed("Invalid SCRAM client-first message: bad authorization id")
        parts = bare.split(",")
        attrs = _attributes(",".join(parts[:2]))
        if len(attrs) < 2 or attrs[0][0] != "n" or attrs[1][0] != "r" or not attrs[1][1]:
            raise AuthenticationFailed("Invalid SCRAM client-first message: expected n=user,r=nonce")
        user = self._user = _unescape(attrs[0][1])
        if authzid and _unescape(authzid[2:]) != user:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username",
                user,
            )
        if _token_authentication(parts[2:]):
            found = self._token_credential_of(user, self._m) if self._token_credential_of else None
            if found is None:
                raise AuthenticationFailed(_INVALID, user)
            self._credential, self._owner = found
            self.token_authenticated = True
        else:
            self._credential, self._owner = self._credential_of(user, self._m), user
        if self._credential is None:
            raise AuthenticationFailed(_INVALID, user)
        cnonce = attrs[1][1]
        if not cnonce.isprintable() or "," in cnonce:
            raise AuthenticationFailed("Invalid SCRAM nonce", user)
        self._gs2 = f"{flag},{authzid},"
        self._first_bare = bare
        self._nonce = cnonce + base64.b64encode(secrets.token_bytes(24)).decode()
        salt = base64.b64encode(self._credential.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={self._credential.iterations}"
        return self._server_first

    def _client_final(self, message: str) -> str:
        credential, user = self._credential, self._user
        assert credential is not None
        without_proof, sep, proof_b64 = message.rpartition(",p=")
        attrs = _attributes(without_proof) if sep else []
        if len(attrs) < 2 or attrs[0][0] != "c" or attrs[1][0] != "r":
            raise AuthenticationFailed("Invalid SCRAM client-final message: expected c=,r=,p=", user)
        try:
            binding = base64.b64decode(attrs[0][1], validate=True)
            proof = base64.b64decode(proof_b64, validate=True)
        except (binascii.Error, ValueError):
            raise AuthenticationFailed("Invalid SCRAM client-final message: bad base64", user) from None
        if binding != self._gs2.encode():
            raise AuthenticationFailed("Invalid SCRAM client-final message: channel binding mismatch", user)
        # Kafka 3.x accepts a nonce that ends with the server's (librdkafka before 2.2 sends the client
        # nonce twice); the proof covers what was sent, so a replay still fails.
        if not attrs[1][1].endswith(self._nonce):
            raise AuthenticationFailed("Invalid SCRAM nonce: does not match the server's", user)
        auth_message = f"{self._first_bare},{self._server_first},{without_proof}".encode()
        h = self._m.hash_name
        signature = hmac.digest(credential.stored_key, auth_message, h)
        if len(proof) != len(signature):
            raise AuthenticationFailed(_INVALID, user)
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(h, client_key).digest(), credential.stored_key):
            raise AuthenticationFailed(_INVALID, user)
        self.complete = True
        self.authorization_id = self._owner
        server_signature = hmac.digest(credential.server_key, auth_message, h)
        return "v=" + base64.b64encode(server_signature).decode()
