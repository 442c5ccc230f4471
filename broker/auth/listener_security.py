"""What one listener needs to authenticate its clients, built once at start from its properties
(`listener.name.<name>.<property>` first): the TLS context and principal mapper, the SASL mechanisms
enabled, the PLAIN users of the JAAS config, the OAUTHBEARER validator and the re-authentication time."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafkito.broker.auth.jaas import JaasError, parse_jaas
from kafkito.broker.auth.mechanisms import SaslServer
from kafkito.broker.auth.mechanisms.oauthbearer import OAuthBearerServer, UnsecuredValidator
from kafkito.broker.auth.mechanisms.plain import PlainServer
from kafkito.broker.auth.mechanisms.scram import ScramServer
from kafkito.broker.auth.tls import PrincipalMapper, server_context, subject_name
from kafkito.broker.config import Config, ConfigError
from kafkito.broker.listeners import Listener
from kafkito.broker.security.scram import mechanism_named

if TYPE_CHECKING:
    import ssl

    from kafkito.broker.security.store import SecurityStore

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


class ListenerSecurity:
    """One listener's authentication settings; `server(mechanism)` starts one SASL exchange."""

    def __init__(self, listener: Listener, config: Config, store: Callable[[], SecurityStore]) -> None:
        self.listener = listener
        self._store = store
        self._config = config
        self.ssl_context: ssl.SSLContext | None = None
        self.mapper: PrincipalMapper | None = None
        self.mechanisms: list[str] = []
        self.plain_users: dict[str, str] = {}
        self.oauth = UnsecuredValidator()
        self.reauth_ms = 0
        self.max_receive_size = 524288  # sasl.server.max.receive.size
        if listener.protocol.tls:
            self.ssl_context = server_context(self.prop)
            self.mapper = PrincipalMapper(self.prop("ssl.principal.mapping.rules") or "DEFAULT")
        if listener.protocol.sasl:
            self._sasl_settings()

    def prop(self, name: str) -> str | None:
        return self.listener.prop(self._config, name)

    def _jaas_options(self, mechanism: str) -> dict[str, str] | None:
        key = f"listener.name.{self.listener.name.lower()}.{mechanism.lower()}.sasl.jaas.config"
        text = self._config.extra.get(key)
        if text is None:
            return None
        try:
            return parse_jaas(text).options
        except JaasError as e:
            raise ConfigError(f"{key}: {e}") from None

    def _sasl_settings(self) -> None:
        enabled = [
            m.strip().upper() for m in (self.prop("sasl.enabled.mechanisms") or "").split(",") if m.strip()
        ]
        unsupported = [m for m in enabled if m not in MECHANISMS]
        if unsupported or not enabled:
            raise ConfigError(
                f"listener {self.listener.name}: sasl.enabled.mechanisms={','.join(enabled)}: "
                f"kafkito supports {', '.join(MECHANISMS)} (Kafka's default, GSSAPI, needs Kerberos)"
            )
        self.mechanisms = enabled
        if "PLAIN" in enabled:
            options = self._jaas_options("PLAIN")
            if options is None:
                raise ConfigError(
                    f"listener {self.listener.name} enables PLAIN but sets no "
                    f"listener.name.{self.listener.name.lower()}.plain.sasl.jaas.config "
                    "(its user_<name> users)"
                )
            self.plain_users = {k[5:]: v for k, v in options.items() if k.startswith("user_")}
        if "OAUTHBEARER" in enabled:
            try:
                self.oauth = UnsecuredValidator.from_options(self._jaas_options("OAUTHBEARER") or {})
            except ValueError as e:
                raise ConfigError(f"listener {self.listener.name}: {e}") from None
        try:
            self.reauth_ms = int(self.prop("connections.max.reauth.ms") or 0)
            self.max_receive_size = int(self.prop("sasl.server.max.receive.size") or 524288)
        except ValueError:
            message = "connections.max.reauth.ms and sasl.server.max.receive.size must be integers"
            raise ConfigError(message) from None

    def server(self, mechanism: str) -> SaslServer:
        if mechanism == "PLAIN":
            return PlainServer(self.plain_users)
        if mechanism == "OAUTHBEARER":
            return OAuthBearerServer(self.oauth)
        store = self._store()
        return ScramServer(mechanism_named(mechanism), store.scram.get, store.token_credential)

    def certificate_principal(self, peercert: dict[str, Any] | None) -> str | None:
        """`User:<mapped subject>` of a verified client certificate, None without one.

        Raises ValueError when no mapping rule applies (Kafka refuses the connection then).
        """
        if not peercert or self.mapper is None:
            return None
        dn = subject_name(peercert)
        name = self.mapper.name(dn)
        if name is None:
            raise ValueError(f"no ssl.principal.mapping.rules rule applies to {dn}")
        return f"User:{name}"


def check_listener_settings(config: Config) -> None:
    """Build every listener's settings once (ConfigError on the first bad one), before the broker starts."""
    from kafkito.broker.listeners import listeners_of

    for listener in listeners_of(config):
        ListenerSecurity(listener, config, _no_store)


def _no_store() -> SecurityStore:
    raise RuntimeError("no security store before the broker starts")
