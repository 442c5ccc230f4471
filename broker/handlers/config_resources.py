"""What the config APIs share (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs): resource
types, the request fields of a resource, the broker-name check and the per-resource result."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

import structlog

from kafkito.broker.log.config import deprecated_topic_configs
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8
GROUP = 32

T = TypeVar("T")

log = structlog.get_logger("kafkito.config")


class ConfigResource(Protocol):
    resource_type: int
    resource_name: str


class InvalidResource(Exception):
    """The request names a resource or operation this broker does not serve: INVALID_REQUEST."""


def check_broker_name(name: str, node_id: int) -> None:
    """A broker resource names this broker by its id, or is empty (the broker answering)."""
    if name not in ("", str(node_id)):
        raise InvalidResource(f"unexpected broker id {name!r}")


def resource_result(resource: ConfigResource, apply: Callable[[], T]) -> tuple[dict[str, Any], T | None]:
    """Run `apply` for one resource: its response entry (error code and message) and what it returned.

    A LogError answers with its own code, an InvalidResource with INVALID_REQUEST; either gives None.
    """
    out: dict[str, Any] = dict(
        error_code=ErrorCode.NONE,
        error_message=None,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
    )
    try:
        return out, apply()
    except LogError as exc:
        out.update(error_code=exc.code, error_message=exc.message or None)
    except InvalidResource as exc:
        out.update(error_code=ErrorCode.INVALID_REQUEST, error_message=str(exc))
    return out, None


def warn_deprecated(topic: str, names: Iterable[str]) -> None:
    """Log a warning for each deprecated topic config set (accepted, as Kafka 3.9 accepts them)."""
    for name, replacement in deprecated_topic_configs(names).items():
        log.warning("topic.config_deprecated", topic=topic, config=name, replaced_by=replacement)
