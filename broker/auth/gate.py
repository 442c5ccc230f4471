"""The SASL state machine of one connection on a SASL listener, consulted by the server for each frame.

Before authentication only ApiVersions, SaslHandshake and SaslAuthenticate are accepted (anything else
closes the connection, as Kafka's ILLEGAL_SASL_STATE does). SaslHandshake v1 is followed by
SaslAuthenticate requests; v0 by the mechanism's raw tokens, size-prefixed without a Kafka header.
A failure is answered (SASL_AUTHENTICATION_FAILED and Kafka's message), logged without the secret,
and the connection closed. With `connections.max.reauth.ms`, the session lasts that long (or to the
token's expiry): the client re-authenticates on the connection (KIP-368, the same principal and
mechanism) or, once it has expired, any other request closes the connection.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from enum import Enum
from typing import Any

import structlog

from kafkito.broker.auth.listener_security import ListenerSecurity
from kafkito.broker.auth.mechanisms import AuthenticationFailed, SaslServer
from kafkito.broker.dispatch import CloseConnection
from kafkito.protocol.codec import (
    MalformedRequest,
    build_response,
    decode_request,
    encode_response,
    is_flexible,
    parse_request_header,
)
from kafkito.protocol.errors import ErrorCode

log = structlog.get_logger("kafkito.auth")

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
_VERSIONS = {SASL_HANDSHAKE: (0, 1), SASL_AUTHENTICATE: (0, 2)}
_PEEK = struct.Struct(">hh")
_SIZE = struct.Struct(">i")


class CloseAfterReply(CloseConnection):
    """The connection closes once `reply` (a failure's answer) is sent, as Kafka closes it."""

    def __init__(self, reason: str, reply: bytes) -> None:
        super().__init__(reason)
        self.reply = reply


class _State(Enum):
    HANDSHAKE = "handshake"  # ApiVersions or SaslHandshake expected
    AUTHENTICATE = "authenticate"  # SaslAuthenticate (or a raw token after a v0 handshake) expected
    AUTHENTICATED = "authenticated"


class SaslGate:
    """`frame(frame)`: the reply to send (bytes), or None to dispatch the request as usual.

    CloseAfterReply is raised when a failure's answer must be the connection's last reply,
    CloseConnection when the connection must close without a reply.
    """

    def __init__(
        self,
        security: ListenerSecurity,
        on_authenticated: Callable[[str], None],
        peer: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._security = security
        self._on_authenticated = on_authenticated
        self._clock = clock
        self._log = log.bind(listener=security.listener.name, peer=peer)
        self._state = _State.HANDSHAKE
        self._raw = False
        self._server: SaslServer | None = None
        self._mechanism: str | None = None
        self.principal: str | None = None
        self.token_authenticated = False  # with a delegation token (SCRAM `tokenauth=true`)
        self._expires: float | None = None  # monotonic seconds; None: the session never expires
        self._reauthenticating = False
        self.session_ms = 0
        self.closing = False

    @property
    def authenticated(self) -> bool:
        return self._state is _State.AUTHENTICATED and not self._reauthenticating

    def frame(self, frame: bytes) -> bytes | None:
        reply = self._frame(frame)
        if self.closing and reply is not None:
            raise CloseAfterReply("SASL authentication failed or refused", reply)
        return reply

    def _frame(self, frame: bytes) -> bytes | None:
        if self._state is _State.AUTHENTICATE and self._raw:
            return self._raw_token(frame)
        try:
            api_key, version = _PEEK.unpack_from(frame)
        except struct.error:
            raise CloseConnection("request frame shorter than a header") from None
        if self._state is _State.AUTHENTICATED:
            return self._authenticated(frame, api_key, version)
        if self._state is _State.HANDSHAKE:
            if api_key == API_VERSIONS:
                return None
            if api_key == SASL_HANDSHAKE:
                return self._handshake(frame, version)
        elif api_key == SASL_AUTHENTICATE:
            return self._authenticate(frame, version)
        raise CloseConnection(
            f"unexpected request (api key {api_key}) in SASL state {self._state.value} (ILLEGAL_SASL_STATE)"
        )

    def _authenticated(self, frame: bytes, api_key: int, version: int) -> bytes | None:
        reauth = self._security.reauth_ms > 0
        if api_key == SASL_HANDSHAKE and reauth:
            self._reauthenticating = True
            self._state = _State.HANDSHAKE
            return self._handshake(frame, version)
        if self._expires is not None and self._clock() > self._expires:
            raise CloseConnection(
                "the SASL session expired (connections.max.reauth.ms) without re-authentication"
            )
        return None  # SaslHandshake/SaslAuthenticate here reach their handlers: ILLEGAL_SASL_STATE

    def _decode(self, frame: bytes, api_key: int, version: int) -> tuple[int, Any]:
        lo, hi = _VERSIONS[api_key]
        if not lo <= version <= hi:
            raise CloseConnection(f"unsupported version {version} of api key {api_key} (supported {lo}-{hi})")
        try:
            header = parse_request_header(frame, is_flexible(api_key, version))
            return header.correlation_id, decode_request(frame, header)
        except MalformedRequest as e:
            raise CloseConnection(str(e)) from e

    def _handshake(self, frame: bytes, version: int) -> bytes:
        correlation_id, request = self._decode(frame, SASL_HANDSHAKE, version)
        mechanism = request.mechanism or ""
        enabled = self._security.mechanisms
        error = ErrorCode.NONE
        if mechanism not in enabled:
            error = ErrorCode.UNSUPPORTED_SASL_MECHANISM
            self._log.warning("sasl.unsupported_mechanism", mechanism=mechanism[:64], enabled=enabled)
            self.closing = True
        elif self._reauthenticating and mechanism != self._mechanism:
            error = ErrorCode.ILLEGAL_SASL_STATE
            self._log.warning("sasl.reauthentication_failed", reason="mechanism changed", mechanism=mechanism)
            self.closing = True
        else:
            self._mechanism = mechanism
            self._server = self._security.server(mechanism)
            self._state = _State.AUTHENTICATE
            self._raw = version == 0
        response = build_response(SASL_HANDSHAKE, version, error_code=error, mechanisms=enabled)
        return encode_response(response, correlation_id)

    def _authenticate(self, frame: bytes, version: int) -> bytes:
        correlation_id, request = self._decode(frame, SASL_AUTHENTICATE, version)
        try:
            challenge = self._step(bytes(request.auth_bytes or b""))
        except AuthenticationFailed as e:
            self.closing = True
            response = build_response(
                SASL_AUTHENTICATE, version, error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                error_message=e.message, auth_bytes=b"", session_lifetime_ms=0,
            )  # fmt: skip
            return encode_response(response, correlation_id)
        lifetime = self.session_ms if self._state is _State.AUTHENTICATED else 0
        response = build_response(
            SASL_AUTHENTICATE, version, error_code=ErrorCode.NONE, error_message=None,
            auth_bytes=challenge, session_lifetime_ms=lifetime,
        )  # fmt: skip
        return encode_response(response, correlation_id)

    def _raw_token(self, frame: bytes) -> bytes:
        try:
            challenge = self._step(frame)
        except AuthenticationFailed as e:
            # A v0 exchange has no way to carry the error: Kafka closes the connection.
            raise CloseConnection(f"SASL authentication failed: {e.message}") from None
        if self._state is _State.AUTHENTICATED:
            self._raw = False
            if not challenge:
                return b""  # PLAIN and OAUTHBEARER answer nothing once done
        return _SIZE.pack(len(challenge)) + challenge

    def _step(self, token: bytes) -> bytes:
        server = self._server
        assert server is not None and self._mechanism is not None
        try:
            challenge = server.evaluate(token)
        except AuthenticationFailed as e:
            self._log.warning(
                "sasl.authentication_failed", mechanism=self._mechanism, user=e.user, reason=e.message
            )
            raise
        except Exception as exc:  # a mechanism's bug must not take the connection handler with it
            # Only the exception's type: its message or a traceback's locals could hold the secret.
            self._log.error("sasl.mechanism_error", mechanism=self._mechanism, error=type(exc).__name__)
            raise AuthenticationFailed(
                f"Authentication failed during authentication with SASL mechanism {self._mechanism}"
            ) from None
        if server.complete:
            self._completed(server)
        return challenge

    def _completed(self, server: SaslServer) -> None:
        principal = f"User:{server.authorization_id}"
        if self._reauthenticating and principal != self.principal:
            raise AuthenticationFailed(
                f"Cannot change principals during re-authentication from {self.principal}: {principal}"
            )
        first = self.principal is None
        self.principal = principal
        self._state = _State.AUTHENTICATED
        self._reauthenticating = False
        self._server = None
        lifetime = self.session_ms = self._lifetime_ms(server)
        self._expires = self._clock() + lifetime / 1000 if lifetime else None
        self._log.info(
            "sasl.authenticated" if first else "sasl.reauthenticated",
            mechanism=self._mechanism, principal=principal, session_lifetime_ms=lifetime or None,
        )  # fmt: skip
        if first:
            self.token_authenticated = bool(getattr(server, "token_authenticated", False))
            self._on_authenticated(principal)

    def _lifetime_ms(self, server: SaslServer) -> int:
        """The session's lifetime: connections.max.reauth.ms, or the credential's sooner expiry; 0: none."""
        reauth = self._security.reauth_ms
        if reauth <= 0:
            return 0
        token = server.lifetime_ms
        return min(reauth, token) if token is not None else reauth
