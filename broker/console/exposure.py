"""Whether the console shows more than the broker's clients may see: it has no authentication, so on
a broker whose listeners authenticate (SASL, or TLS with required client certificates) or that
enforces ACLs, every local process can read every message through it. Said at start, not refused."""

from __future__ import annotations

from kafkito.broker.config import Config
from kafkito.broker.listeners import authenticates, listeners_of

WARNING = (
    "the web console has no authentication: it serves every topic, message and group to any local "
    "process (and --http-write lets any local process delete topics and reset offsets), past SASL, "
    "client certificates and ACLs"
)


def guarded_by(config: Config) -> list[str]:
    """What the console bypasses: the authenticating listeners' names, and `authorizer` when ACLs apply."""
    names = [listener.name for listener in listeners_of(config) if authenticates(listener, config)]
    if config.authorizer_class_name.strip():
        names.append("authorizer")
    return names


def warning(config: Config) -> str | None:
    """The start-up warning for a console on a broker with authentication or ACLs, else None."""
    return WARNING if guarded_by(config) else None
