"""The cluster's feature levels (KIP-584), as a freshly formatted Kafka 4.4 cluster reports them.

ApiVersions v3+ carries them in tagged fields: the levels this broker supports (SupportedFeatures),
the levels the cluster runs at (FinalizedFeatures, each with min = max = the level) and the epoch of
that information (FinalizedFeaturesEpoch). The levels are Kafka 4.4's row of
`protocol/kafka_releases.py` (kafka-server-common 4.4's `Feature`: `minimumProduction` ..
`latestProduction`, finalized at their defaults for the latest production `metadata.version`):

- `metadata.version` 33 (4.4-IV0), supported from 7 (3.3-IV3, the lowest KRaft level 4.x accepts).
- `transaction.version` 2 (KIP-890 part 2: the epoch bumps at every transaction end, Produce v12 and
  TxnOffsetCommit v5 add their partition implicitly); supported 0..2.
- `group.version` 1 (KIP-848 consumer groups); supported 0..1.
- `share.version` 2 (KIP-932 share groups, on by default since 4.2; level 2 comes with 4.4-IV0);
  supported 0..2. At 0 the share-group APIs answer UNSUPPORTED_VERSION, as Kafka's.
- `streams.version` 1 (KIP-1071 streams groups) and `eligible.leader.replicas.version` 1 (KIP-966);
  supported 0..1 each.
- `kraft.version` 1, as `kafka-storage format --standalone` (the 4.x quick start) leaves it (a cluster
  formatted for static `controller.quorum.voters` runs it at 0 and does not list it). Supported 0..1.

As in Kafka, a feature whose finalized level is 0 is not listed, and ApiVersions below v4 leaves out
supported features whose minimum is 0 (KAFKA-17011: old clients rejected a 0 minimum).

Kafka has no broker property for these levels: they are set by `kafka-storage format --feature` and
changed with UpdateFeatures. Here a fresh broker starts at the levels above; UpdateFeatures changes
them with Kafka's validation (`metadata.version` and `kraft.version` only upwards), and `FeatureLevels`
(`broker/feature_updates.py`) keeps the result in the data dir's dynamic state, so a restart keeps it
and ApiVersions reports it with a new epoch. The module-level functions give a fresh cluster's
levels, for callers without a broker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"
ELR_VERSION = "eligible.leader.replicas.version"
LATEST_RELEASE = "4.4"  # the release whose fresh cluster these levels are

# ApiVersions answers below this version leave out supported features with a minimum of 0.
ZERO_MIN_SINCE_API_VERSION = 4
# Kafka's epoch is the offset of the metadata it read the levels from; these never change here.
FINALIZED_FEATURES_EPOCH = 0


class Feature(NamedTuple):
    """One feature: the levels this broker supports and the level the cluster is finalized at (a
    NamedTuple: every start imports this module, and defining one is ~10x cheaper than a dataclass)."""

    name: str
    min_level: int
    max_level: int
    finalized: int


# Kafka 4.4's row of protocol/kafka_releases.py (tests/broker/test_features.py holds them equal; that
# module is not imported here, as every start imports this one).
FEATURES: tuple[Feature, ...] = (
    Feature(METADATA_VERSION, 7, 33, 33),
    Feature(KRAFT_VERSION, 0, 1, 1),
    Feature(TRANSACTION_VERSION, 0, 2, 2),
    Feature(GROUP_VERSION, 0, 1, 1),
    Feature(ELR_VERSION, 0, 1, 1),
    Feature(SHARE_VERSION, 0, 2, 2),
    Feature(STREAMS_VERSION, 0, 1, 1),
)
_BY_NAME = {f.name: f for f in FEATURES}


def finalized_level(name: str) -> int:
    """The level the cluster runs `name` at (0 for a feature it does not know)."""
    feature = _BY_NAME.get(name)
    return 0 if feature is None else feature.finalized


def transaction_version() -> int:
    """The finalized `transaction.version`: 2 means transactions V2 (KIP-890 part 2)."""
    return finalized_level(TRANSACTION_VERSION)


def transaction_log_value_version() -> int:
    """The `__transaction_state` value version Kafka writes: the flexible v1 from transaction.version 1."""
    return 1 if transaction_version() >= 1 else 0


def supported_features(api_version: int) -> list[dict[str, Any]]:
    """ApiVersions' SupportedFeatures for a response of `api_version`."""
    return [
        dict(name=f.name, min_version=f.min_level, max_version=f.max_level)
        for f in FEATURES
        if f.min_level > 0 or api_version >= ZERO_MIN_SINCE_API_VERSION
    ]


def finalized_features() -> list[dict[str, Any]]:
    """ApiVersions' FinalizedFeatures: each level above 0, as min = max = the level."""
    return [
        dict(name=f.name, max_version_level=f.finalized, min_version_level=f.finalized)
        for f in FEATURES
        if f.finalized > 0
    ]


def api_versions_fields(
    api_version: int, levels: Mapping[str, int] | None = None, epoch: int = FINALIZED_FEATURES_EPOCH
) -> dict[str, Any]:
    """The feature fields of an ApiVersions response (tagged, v3+; nothing before), at `levels` (by
    name; a fresh cluster's when None)."""
    if api_version < 3:
        return {}
    finalized = (
        finalized_features()
        if levels is None
        else [
            dict(name=name, max_version_level=level, min_version_level=level)
            for name, level in levels.items()
            if level > 0
        ]
    )
    return dict(
        supported_features=supported_features(api_version),
        finalized_features_epoch=epoch,
        finalized_features=finalized,
        zk_migration_ready=False,
    )
