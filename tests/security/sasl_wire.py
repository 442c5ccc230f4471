"""The client side of SASL exchanges over raw requests (`WireClient`), for tests that need exact bytes:
SCRAM (RFC 5802) computed here from the password, PLAIN and unsecured OAUTHBEARER tokens."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Any

from tests.support.wire import WireClient

HANDSHAKE, AUTHENTICATE = 17, 36


class ScramClient:
    def __init__(self, user: str, password: str, hash_name: str = "sha512") -> None:
        self.user, self.password, self.hash = user, password, hash_name
        self.nonce = base64.b64encode(secrets.token_bytes(18)).decode()
        self.first_bare = f"n={user},r={self.nonce}"
        self.auth_message = b""
        self.salted = b""

    def first(self) -> bytes:
        return f"n,,{self.first_bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        attrs = dict(part.split("=", 1) for part in server_first.decode().split(","))
        salt, iterations = base64.b64decode(attrs["s"]), int(attrs["i"])
        self.salted = hashlib.pbkdf2_hmac(self.hash, self.password.encode(), salt, iterations)
        without_proof = f"c=biws,r={attrs['r']}"
        self.auth_message = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = hmac.digest(self.salted, b"Client Key", self.hash)
        stored = hashlib.new(self.hash, client_key).digest()
        signature = hmac.digest(stored, self.auth_message, self.hash)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def server_signature_ok(self, server_final: bytes) -> bool:
        server_key = hmac.digest(self.salted, b"Server Key", self.hash)
        expected = base64.b64encode(hmac.digest(server_key, self.auth_message, self.hash)).decode()
        return server_final.decode() == f"v={expected}"


def plain_token(user: str, password: str, authzid: str = "") -> bytes:
    return f"{authzid}\0{user}\0{password}".encode()


def unsecured_jwt(claims: dict[str, Any], alg: str = "none") -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{part({'alg': alg})}.{part(claims)}."


def oauth_token(jwt: str) -> bytes:
    return f"n,,\x01auth=Bearer {jwt}\x01\x01".encode()


def handshake(client: WireClient, mechanism: str, version: int = 1) -> Any:
    return client.request(HANDSHAKE, version, mechanism=mechanism)


def authenticate(client: WireClient, token: bytes, version: int = 2) -> Any:
    return client.request(AUTHENTICATE, version, auth_bytes=token)


def scram_login(client: WireClient, user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> Any:
    """A whole SCRAM exchange; the last SaslAuthenticate response (checked for the server's signature)."""
    scram = ScramClient(user, password, "sha512" if mechanism.endswith("512") else "sha256")
    assert handshake(client, mechanism).error_code == 0
    first = authenticate(client, scram.first())
    if first.error_code != 0:
        return first
    last = authenticate(client, scram.final(first.auth_bytes))
    if last.error_code == 0:
        assert scram.server_signature_ok(last.auth_bytes)
    return last
