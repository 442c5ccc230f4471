"""UpdateFeatures (57): change the cluster's finalized feature levels (KIP-584), all or none.

Checked and applied by `FeatureLevels` (`broker/feature_updates.py`) as Kafka's controller does; the
levels survive a restart and ApiVersions reports them. A refused update refuses the request:
INVALID_UPDATE_VERSION at the top and, below v2, for every feature named, with Kafka's message.

v0 AllowDowngrade; v1 UpgradeType (1 upgrade, 2 safe downgrade, 3 unsafe downgrade) and
ValidateOnly; v2 drops the per-feature results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.feature_updates import SAFE_DOWNGRADE, UPGRADE, FeatureUpdate, FeatureUpdateError
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 57
VERSIONS = (0, 2)


class FeatureUpdateKey(Protocol):
    feature: str
    max_version_level: int
    allow_downgrade: bool  # v0
    upgrade_type: int  # v1+


class UpdateFeaturesRequest(Protocol):
    """The fields of kafka-python's UpdateFeaturesRequest this handler reads."""

    feature_updates: Sequence[FeatureUpdateKey]
    validate_only: bool  # v1+


def _update(ctx: RequestContext, u: FeatureUpdateKey) -> FeatureUpdate:
    if ctx.version >= 1:
        return FeatureUpdate(u.feature, u.max_version_level, u.upgrade_type)
    kind = SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE
    return FeatureUpdate(u.feature, u.max_version_level, kind)


def handle(ctx: RequestContext, request: UpdateFeaturesRequest) -> Any:
    updates = [_update(ctx, u) for u in request.feature_updates]
    validate_only = ctx.version >= 1 and bool(request.validate_only)
    code, message = ErrorCode.NONE, None
    try:
        ctx.configs.features.update(updates, validate_only)
    except FeatureUpdateError as exc:
        code, message = ErrorCode.INVALID_UPDATE_VERSION, str(exc)
    except LogError as exc:  # the levels could not be saved
        code, message = exc.code, exc.message or None
    results = [dict(feature=u.name, error_code=code, error_message=message) for u in updates]
    return ctx.response(throttle_time_ms=0, error_code=code, error_message=message, results=results)
