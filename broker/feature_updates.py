"""`FeatureLevels`: the cluster's finalized feature levels (KIP-584) as UpdateFeatures changes them,
checked as Kafka's controller checks an update, and kept in the data dir's dynamic state.

An update names a feature, a level and an upgrade type (1 upgrade, 2 safe downgrade, 3 unsafe
downgrade). As Kafka's `FeatureControlManager`: an unknown upgrade type, a negative level, a feature or
level this node does not support, a lower level asked as an upgrade, a higher one asked as a
downgrade, a downgrade of `kraft.version` or of `metadata.version` (it might lose metadata) are each
INVALID_UPDATE_VERSION with Kafka's message, and one refused update refuses the whole request
("The update failed for all features since the following feature had an error: ...").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import structlog

from kafkito.broker.dynamic_state import DynamicStateStore
from kafkito.broker.features import FEATURES, KRAFT_VERSION, METADATA_VERSION
from kafkito.broker.log.errors import KafkaStorageError

log = structlog.get_logger("kafkito.features")

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
_SUPPORTED = {f.name: (f.min_level, f.max_level) for f in FEATURES}


@dataclass(frozen=True, slots=True)
class FeatureUpdate:
    name: str
    level: int
    upgrade_type: int


class FeatureUpdateError(Exception):
    """INVALID_UPDATE_VERSION, with Kafka's message for the whole request."""


class FeatureLevels:
    """The finalized levels of one cluster, loaded from and saved to its dynamic state."""

    def __init__(self, store: DynamicStateStore, node_id: int) -> None:
        self._store = store
        self._node_id = node_id
        self.levels: dict[str, int] = {f.name: f.finalized for f in FEATURES}
        self.levels.update({k: v for k, v in store.state.features.items() if k in _SUPPORTED})

    @property
    def epoch(self) -> int:
        return self._store.state.features_epoch

    def level(self, name: str) -> int:
        return self.levels.get(name, 0)

    def _reason(self, u: FeatureUpdate) -> str | None:
        current = self.level(u.name)
        if u.upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return "The controller does not support the given upgrade type."
        if u.level < 0:
            return "A feature version cannot be less than 0."
        supported = _SUPPORTED.get(u.name)
        if supported is None:
            return f"Local controller {self._node_id} does not support this feature."
        if not supported[0] <= u.level <= supported[1]:
            return f"Local controller {self._node_id} only supports versions {supported[0]}-{supported[1]}"
        if u.level < current and u.upgrade_type == UPGRADE:
            return (
                "Can't downgrade the version of this feature without setting the upgrade type to either "
                "safe or unsafe downgrade."
            )
        if u.level > current and u.upgrade_type != UPGRADE:
            return "Can't downgrade to a newer version."
        if u.level < current and u.name == KRAFT_VERSION:
            return "Can't downgrade the version of this feature."
        if u.level < current and u.name == METADATA_VERSION:
            if u.upgrade_type == UNSAFE_DOWNGRADE:
                return "Unsafe metadata downgrade is not supported in this version."
            return "Refusing to perform the requested downgrade because it might delete metadata information."
        return None

    def update(self, updates: Iterable[FeatureUpdate], validate_only: bool) -> None:
        """Apply every update or none; raises FeatureUpdateError for the first one Kafka refuses."""
        wanted = list(updates)
        for u in wanted:
            reason = self._reason(u)
            if reason is not None:
                raise FeatureUpdateError(
                    "The update failed for all features since the following feature had an error: "
                    f"Invalid update version {u.level} for feature {u.name}. {reason}"
                )
        changed = {u.name: u.level for u in wanted if self.level(u.name) != u.level}
        if validate_only or not changed:
            return
        state = self._store.state
        before = dict(self.levels)
        self.levels.update(changed)
        state.features = dict(self.levels)
        state.features_epoch += 1
        try:
            self._store.save()
        except OSError as exc:  # nothing changed: the client gets KAFKA_STORAGE_ERROR
            self.levels = before
            state.features = dict(before)
            state.features_epoch -= 1
            log.error("features.save_failed", path=str(self._store.path), error=str(exc))
            raise KafkaStorageError(f"could not save the feature levels: {exc}") from exc
        log.info("features.updated", levels=changed, epoch=state.features_epoch)
