"""AlterReplicaLogDirs (34): move partitions to another log dir of this broker.

kafkito has one log dir. As Kafka's replica manager answers: a path that is not one of the broker's
log dirs (compared as absolute paths) is LOG_DIR_NOT_FOUND for each of its partitions; an offline dir
is KAFKA_STORAGE_ERROR; a partition the broker does not host is REPLICA_NOT_AVAILABLE; a topic name
too long for the future directory's name is INVALID_TOPIC_EXCEPTION; a partition already in the
named dir is NONE with nothing to move.

v1 no change; v2 flexible.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 34
VERSIONS = (0, 2)

# `<topic>-<partition>.<32 hex of a uuid>-future` must fit in a file name (KAFKA-4893)
_MAX_NAME = 255
_FUTURE_SUFFIX_LEN = 1 + 32 + len("-future")


class AlterReplicaLogDirTopic(Protocol):
    name: str
    partitions: Sequence[int]


class AlterReplicaLogDir(Protocol):
    path: str
    topics: Sequence[AlterReplicaLogDirTopic]


class AlterReplicaLogDirsRequest(Protocol):
    """The fields of kafka-python's AlterReplicaLogDirsRequest this handler reads."""

    dirs: Sequence[AlterReplicaLogDir]


def _move(ctx: RequestContext, path: str, topic: str, partition: int) -> ErrorCode:
    if len(f"{topic}-{partition}") + _FUTURE_SUFFIX_LEN > _MAX_NAME:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    health = ctx.topics.log_dir()
    if path != os.path.abspath(health.path):
        return ErrorCode.LOG_DIR_NOT_FOUND
    if health.offline:
        return ErrorCode.KAFKA_STORAGE_ERROR
    try:
        ctx.topics.get_log(topic, partition)
    except LogError:
        return ErrorCode.REPLICA_NOT_AVAILABLE
    return ErrorCode.NONE  # already in that dir


def handle(ctx: RequestContext, request: AlterReplicaLogDirsRequest) -> Any:
    results: dict[str, list[dict[str, Any]]] = {}
    for d in request.dirs:
        for t in d.topics:
            rows = results.setdefault(t.name, [])
            rows.extend(
                dict(partition_index=p, error_code=_move(ctx, d.path, t.name, p)) for p in t.partitions
            )
    return ctx.response(
        throttle_time_ms=0,
        results=[dict(topic_name=name, partitions=rows) for name, rows in results.items()],
    )
