"""The broker's durable run-time state outside the topic metadata log: dynamic broker configs (the
cluster-wide default and per node id), dynamic group configs (GROUP resources) and the finalized
feature levels with their epoch.

In Kafka these are ConfigRecords and FeatureLevelRecords of `__cluster_metadata`. They change rarely
(an admin's request), so here they are one small file, `dynamic-state.json` in the data dir, rewritten
whole on each change: written to a temporary file, fsynced, renamed over the old one and the directory
fsynced, so that a crash leaves the old state or the new one, never a torn one. A file that cannot be
read is logged and ignored (the broker starts with its static configuration).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from kafkito.broker.log.storage import fsync_dir

log = structlog.get_logger("kafkito.dynamic_state")

FILE_NAME = "dynamic-state.json"
DEFAULT_SCOPE = ""  # the cluster-wide default broker resource (an empty name)


@dataclass(slots=True)
class DynamicState:
    """What the file holds: broker configs by scope ("" or a node id), group configs by group id and
    feature levels."""

    broker_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    group_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)
    features_epoch: int = 0


class DynamicStateStore:
    """Loads and saves the `DynamicState` of one data dir."""

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        self.path = Path(data_dir) / FILE_NAME
        self.state = self._load()

    def _load(self) -> DynamicState:
        try:
            raw: Any = json.loads(self.path.read_text())
            return DynamicState(
                broker_configs={
                    str(scope): {str(k): str(v) for k, v in values.items()}
                    for scope, values in raw.get("broker_configs", {}).items()
                },
                group_configs={
                    str(group): {str(k): str(v) for k, v in values.items()}
                    for group, values in raw.get("group_configs", {}).items()
                },
                features={str(k): int(v) for k, v in raw.get("features", {}).items()},
                features_epoch=int(raw.get("features_epoch", 0)),
            )
        except FileNotFoundError:
            return DynamicState()
        except (OSError, ValueError, AttributeError, TypeError) as exc:
            log.error("dynamic_state.unreadable", path=str(self.path), error=str(exc))
            return DynamicState()

    def save(self) -> None:
        """Write the state durably (temp file, fsync, rename, directory fsync)."""
        state = self.state
        payload = json.dumps(
            {
                "broker_configs": state.broker_configs,
                "group_configs": state.group_configs,
                "features": state.features,
                "features_epoch": state.features_epoch,
            },
            sort_keys=True,
            indent=1,
        )
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        fsync_dir(self.path.parent)
