"""ApiVersions (18): the versions of every API this broker answers, from the handler registry.

v1 adds throttle_time_ms; v3 is flexible and carries the client's software name/version, and the
response the cluster's feature levels in tagged fields (`broker/features.py`); v4 also lists supported
features whose minimum level is 0; v5 (KIP-1242) takes the cluster id and node id the client means to
reach: both or neither (else INVALID_REQUEST), and either not this node's is REBOOTSTRAP_REQUIRED, with
no versions, so the client bootstraps again. A request of a version we do not know is answered by
dispatch as v0 with UNSUPPORTED_VERSION (KIP-511). The ranges are Kafka 3.9's lowest versions, or
Kafka 4's with `kafkito.api.versions.kafka4.minimums=true`. A broker pinned to a Kafka release
(`kafkito.as.version`) answers with that release's ranges and feature levels instead
(`broker/pinned_versions.py`).
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker import features
from kafkito.broker.context import RequestContext
from kafkito.broker.pinned_versions import PinnedVersions, pinned
from kafkito.protocol.errors import ErrorCode

API_KEY = 18
VERSIONS = (0, 5)
INTENDED_NODE_SINCE = 5


# Produce is advertised from v0 also with Kafka 4's minimums, where it is answered from v3 on (KIP-896),
# as Kafka 4 does (KAFKA-18659): librdkafka before 2.8 checks for Produce v2 in the range before it
# compresses with gzip, snappy or lz4, and otherwise sends every batch uncompressed.
_ADVERTISED_MIN = {0: 0}


# Like a Kafka broker with no client telemetry exporter plugin, GetTelemetrySubscriptions (71) and
# PushTelemetry (72) are answered but not advertised, so clients push no metrics.
_UNADVERTISED = frozenset({71, 72})


def api_keys(kafka4_minimums: bool = False) -> list[dict[str, int]]:
    from kafkito.broker.handlers import supported_versions

    return [
        dict(api_key=k, min_version=_ADVERTISED_MIN.get(k, lo), max_version=hi)
        for k, lo, hi in supported_versions(kafka4_minimums)
        if k not in _UNADVERTISED
    ]


def pinned_api_keys(versions: PinnedVersions) -> list[dict[str, int]]:
    """ApiKeys of a broker pinned to a Kafka release."""
    return [
        dict(api_key=k, min_version=lo, max_version=hi)
        for k, (lo, hi) in sorted(versions.advertised.items())
        if k not in _UNADVERTISED
    ]


class ApiVersionsRequest(Protocol):
    """The fields of kafka-python's ApiVersionsRequest this handler reads."""

    client_software_name: str | None  # v3+
    client_software_version: str | None  # v3+
    cluster_id: str | None  # v5+
    node_id: int  # v5+, -1 when not given


def handle(ctx: RequestContext, request: ApiVersionsRequest) -> Any:
    error = ErrorCode.NONE
    if ctx.version >= 3:
        name = request.client_software_name or ""
        ver = request.client_software_version or ""
        if not (_valid_software(name) and _valid_software(ver)):
            error = ErrorCode.INVALID_REQUEST
        elif ctx.version >= INTENDED_NODE_SINCE:
            error = _intended_node(ctx, request.cluster_id, request.node_id)
    if error is not ErrorCode.NONE:  # as Kafka: the error alone, no versions to go on with
        return ctx.response(error_code=error, api_keys=[], throttle_time_ms=0)
    release = ctx.configs.config.kafkito_as_version
    if release is not None:
        versions = pinned(release)
        return ctx.response(
            error_code=error,
            api_keys=pinned_api_keys(versions),
            throttle_time_ms=0,
            **_pinned_feature_fields(ctx.version, versions),
        )
    return ctx.response(
        error_code=error,
        api_keys=api_keys(ctx.configs.config.kafkito_api_versions_kafka4_minimums),
        throttle_time_ms=0,
        **_feature_fields(ctx),
    )


def _feature_fields(ctx: RequestContext) -> dict[str, Any]:
    """The cluster's feature levels as UpdateFeatures left them (ApiVersions v3+)."""
    levels = ctx.configs.features
    return features.api_versions_fields(ctx.version, levels.levels, levels.epoch)


def _pinned_feature_fields(api_version: int, versions: PinnedVersions) -> dict[str, Any]:
    """The feature levels of a fresh cluster of the pinned release (none before 2.7, KIP-584)."""
    if api_version < 3 or versions.features is None:
        return {}
    return dict(
        supported_features=[
            dict(name=f.name, min_version=f.min_level, max_version=f.max_level)
            for f in versions.features
            if f.min_level > 0 or api_version >= features.ZERO_MIN_SINCE_API_VERSION
        ],
        finalized_features_epoch=features.FINALIZED_FEATURES_EPOCH if versions.features else -1,
        finalized_features=[
            dict(name=f.name, max_version_level=f.finalized, min_version_level=f.finalized)
            for f in versions.features
            if f.finalized > 0
        ],
        zk_migration_ready=False,
    )


def _intended_node(ctx: RequestContext, cluster_id: str | None, node_id: int) -> ErrorCode:
    """v5: whether the cluster and node the client names (both, or neither) are this node's."""
    if cluster_id is None and node_id == -1:
        return ErrorCode.NONE
    if cluster_id is None or node_id == -1:
        return ErrorCode.INVALID_REQUEST
    cluster = ctx.cluster
    if cluster_id != cluster.cluster_id or node_id != cluster.node_id:
        return ErrorCode.REBOOTSTRAP_REQUIRED
    return ErrorCode.NONE


def _valid_software(value: str) -> bool:
    # Kafka: [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?
    if not value:
        return False
    ok = all(c.isascii() and (c.isalnum() or c in "-.") for c in value)
    return ok and value[0].isalnum() and value[-1].isalnum()
