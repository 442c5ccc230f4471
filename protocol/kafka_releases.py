"""What each Apache Kafka release from 0.10.0 to 4.4 advertises in ApiVersions: the version range of
every API it answers and, from 2.7 (KIP-584), the feature levels it reports (`serve --as-version`).

Sources, and how they were checked:

- 0.10.0 to 3.9: franz-go's `pkg/kversion` (its `z*` release functions, the ZooKeeper brokers its
  `V0_10_0()` ... `V3_9_0()` return), transcribed as each release's changes over the one before.
  Every minimum is 0. The expanded 3.9 table equals what `ApiKeys.apisForListener(ZK_BROKER)` of
  kafka-clients 3.9.0 lists, minimum and latest stable version of each key.
- 4.0 and later: the KRaft broker, which is what Kafka 4 is. 4.0 and 4.1 are kversion's `b40` and
  `b41`, corrected where Kafka's own ApiKeys (kafka-clients 4.0.0 and 4.1.0, BROKER listener, latest
  stable versions) disagree: kversion keeps JoinGroup's 4.0 minimum of 2 in 4.1, which lowered it back
  to 0. kversion stops at 4.1: 4.2, 4.3 and 4.4 are the ApiKeys of kafka-clients 4.2.0, 4.3.0 and
  4.4.0, and the 4.4 table equals the ApiVersions answer of the reference Kafka 4.4 broker
  (tests/support/kafka_reference.py). `tests/as_version/DumpApiVersions.java` prints those ApiKeys.
- Two differences from ApiKeys on every 4.x: Produce is advertised from v0 though answered from v3
  (KAFKA-18659), and GetTelemetrySubscriptions and PushTelemetry (71, 72) are not advertised, as by a
  broker without a client telemetry plugin. Versions still marked unstable are not listed.
- Feature levels: none before 2.7 (no feature fields at all). 2.7 to 3.2 report no features and a
  finalized epoch of -1. From 3.3 a release reports what a KRaft cluster of it, freshly formatted,
  reports: `metadata.version` from 1 (3.0-IV1) to the release's latest (MetadataVersion of
  kafka-server-common 3.9.0), and from 4.0 the levels of kafka-server-common's `Feature` for that
  release (`minimumProduction`..`latestProduction`, finalized at `defaultVersion(latestProduction)`).
"""

from __future__ import annotations

from typing import NamedTuple

Range = tuple[int, int]


class FeatureLevels(NamedTuple):
    """One feature as a release reports it: supported min..max, and the level a fresh cluster runs."""

    name: str
    min_level: int
    max_level: int
    finalized: int


# 0.10.0's highest versions (every lowest is 0): kversion's z080 ... z0100 applied in order.
_ZK_0_10_0: dict[int, int] = {
    0: 2, 1: 2, 2: 0, 3: 1, 4: 0, 5: 0, 6: 2, 7: 1, 8: 2, 9: 1,
    10: 0, 11: 0, 12: 0, 13: 0, 14: 0, 15: 0, 16: 0, 17: 0, 18: 0,
}  # fmt: skip

# Each later ZooKeeper release: the keys it added or raised, with their new highest version.
_ZK_CHANGES: tuple[tuple[str, dict[int, int]], ...] = (
    ("0.10.1", {1: 3, 2: 1, 3: 2, 11: 1, 19: 0, 20: 0}),
    ("0.10.2", {6: 3, 19: 1}),
    ("0.11.0", {
        0: 3, 1: 5, 2: 2, 3: 4, 8: 3, 9: 3, 10: 1, 11: 2, 12: 1, 13: 1, 14: 1, 15: 1, 16: 1, 18: 1,
        19: 2, 20: 1, 21: 0, 22: 0, 23: 0, 24: 0, 25: 0, 26: 0, 27: 0, 28: 0, 29: 0, 30: 0, 31: 0,
        32: 0, 33: 0,
    }),
    ("1.0", {0: 5, 1: 6, 3: 5, 4: 1, 6: 4, 17: 1, 34: 0, 35: 0, 36: 0, 37: 0}),
    ("1.1", {1: 7, 32: 1, 38: 0, 39: 0, 40: 0, 41: 0, 42: 0}),
    ("2.0", {
        0: 6, 1: 8, 2: 3, 3: 6, 8: 4, 9: 4, 10: 2, 11: 3, 12: 2, 13: 2, 14: 2, 15: 2, 16: 2, 18: 2,
        19: 3, 20: 2, 21: 1, 22: 1, 23: 1, 24: 1, 25: 1, 26: 1, 28: 1, 29: 1, 30: 1, 31: 1, 32: 2,
        33: 1, 34: 1, 35: 1, 37: 1, 38: 1, 39: 1, 40: 1, 41: 1, 42: 1,
    }),
    ("2.1", {0: 7, 1: 10, 2: 4, 3: 7, 8: 6, 9: 5, 20: 3, 23: 2, 28: 2}),
    ("2.2", {2: 5, 4: 2, 5: 1, 6: 5, 7: 2, 11: 4, 36: 1, 43: 0}),
    ("2.3", {1: 11, 3: 8, 8: 7, 11: 5, 12: 3, 14: 3, 15: 3, 23: 3, 44: 0}),
    ("2.4", {
        0: 8, 3: 9, 4: 4, 5: 2, 6: 6, 7: 3, 8: 8, 9: 6, 10: 3, 11: 6, 12: 4, 13: 4, 14: 4, 15: 5,
        16: 3, 18: 3, 19: 5, 20: 4, 22: 2, 38: 2, 42: 2, 43: 2, 44: 1, 45: 0, 46: 0, 47: 0,
    }),
    ("2.5", {9: 7, 11: 7, 14: 5, 22: 3, 28: 3, 29: 2, 30: 2, 31: 2, 36: 2, 37: 2, 39: 2, 40: 2, 41: 2}),
    ("2.6", {5: 3, 16: 4, 21: 2, 32: 3, 35: 2, 48: 0, 49: 0}),
    ("2.7", {1: 12, 19: 6, 20: 5, 22: 4, 24: 2, 25: 2, 26: 2, 37: 3, 50: 0, 51: 0, 56: 0, 57: 0}),
    ("2.8", {
        0: 9, 2: 6, 3: 11, 4: 5, 6: 7, 19: 7, 20: 6, 23: 4, 24: 3, 25: 3, 26: 3, 27: 1, 32: 4,
        33: 2, 34: 2, 48: 1, 49: 1, 60: 0, 61: 0,
    }),
    ("3.0", {2: 7, 9: 8, 10: 4, 65: 0, 66: 0, 67: 0}),
    ("3.1", {1: 13, 3: 12}),
    ("3.2", {4: 6, 11: 9, 13: 5, 35: 3, 56: 1}),
    ("3.3", {29: 3, 30: 3, 31: 3, 35: 4, 38: 3, 41: 3, 56: 2, 57: 1}),
    ("3.4", {4: 7, 5: 4, 6: 8, 58: 0}),
    ("3.5", {1: 15, 2: 8, 56: 3}),
    ("3.6", {24: 4}),
    ("3.7", {0: 10, 1: 16, 8: 9, 9: 9, 60: 1, 68: 0}),
    ("3.8", {0: 11, 10: 5, 16: 5, 22: 5, 24: 5, 25: 4, 26: 4, 28: 4, 66: 1, 69: 0}),
    ("3.9", {1: 17, 2: 9, 10: 6, 18: 4}),
)  # fmt: skip

# 4.0, a KRaft broker: (lowest, highest) of every key it advertises.
_KRAFT_4_0: dict[int, Range] = {
    0: (0, 12), 1: (4, 17), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 10: (0, 6), 11: (2, 9),
    12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (2, 7),
    20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 1),
    28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 4),
    36: (0, 2), 37: (0, 3), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 2), 43: (0, 2),
    44: (0, 1), 45: (0, 0), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0),
    55: (0, 2), 57: (0, 2), 60: (0, 2), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 1), 68: (0, 1),
    69: (0, 1), 74: (0, 0), 75: (0, 0), 80: (0, 0), 81: (0, 0),
}  # fmt: skip

# Each later KRaft release: the keys it added or changed, with their new (lowest, highest).
_KRAFT_CHANGES: tuple[tuple[str, dict[int, Range]], ...] = (
    ("4.1", {
        0: (0, 13), 1: (4, 18), 11: (0, 9), 45: (0, 1), 66: (0, 2), 74: (0, 1),
        76: (1, 1), 77: (1, 1), 78: (1, 1), 79: (1, 1),  # share groups (KIP-932)
        83: (0, 0), 84: (0, 0), 85: (0, 0), 86: (0, 0), 87: (0, 0),  # share-group state
        90: (0, 0), 91: (0, 0), 92: (0, 0),  # share-group offsets
    }),
    ("4.2", {
        2: (1, 11), 8: (2, 10), 9: (1, 10), 27: (1, 2), 78: (1, 2), 79: (1, 2), 80: (0, 1), 85: (0, 1),
        87: (0, 1), 88: (0, 0), 89: (0, 0), 90: (0, 1),
    }),
    ("4.3", {35: (1, 5)}),
    ("4.4", {18: (0, 5), 28: (0, 6), 42: (0, 3), 88: (0, 1), 89: (0, 1), 93: (0, 0), 94: (0, 0)}),
)  # fmt: skip


def _expand() -> dict[str, dict[int, Range]]:
    tables: dict[str, dict[int, Range]] = {}
    maxima = dict(_ZK_0_10_0)
    tables["0.10.0"] = {key: (0, hi) for key, hi in maxima.items()}
    for name, changes in _ZK_CHANGES:
        maxima.update(changes)
        tables[name] = {key: (0, hi) for key, hi in sorted(maxima.items())}
    ranges = dict(_KRAFT_4_0)
    tables["4.0"] = dict(sorted(ranges.items()))
    for name, kraft_changes in _KRAFT_CHANGES:
        ranges.update(kraft_changes)
        tables[name] = dict(sorted(ranges.items()))
    return tables


# Release name ("0.10.0" ... "0.11.0", "1.0" ... "4.4") -> API key -> (lowest, highest) advertised.
RELEASES: dict[str, dict[int, Range]] = _expand()
NAMES: tuple[str, ...] = tuple(RELEASES)


def _metadata_version(latest: int) -> tuple[FeatureLevels, ...]:
    return (FeatureLevels("metadata.version", 1, latest, latest),)


def _kraft_4(
    metadata: int, elr: int, share: tuple[int, int], streams: tuple[int, int]
) -> tuple[FeatureLevels, ...]:
    levels: tuple[FeatureLevels, ...] = (
        FeatureLevels("metadata.version", 7, metadata, metadata),
        FeatureLevels("kraft.version", 0, 1, 1),
        FeatureLevels("transaction.version", 0, 2, 2),
        FeatureLevels("group.version", 0, 1, 1),
        FeatureLevels("eligible.leader.replicas.version", 0, 1, elr),
    )
    if share[0]:
        levels += (FeatureLevels("share.version", 0, share[0], share[1]),)
    if streams[0]:
        levels += (FeatureLevels("streams.version", 0, streams[0], streams[1]),)
    return levels


# Release -> its feature levels: None before 2.7 (ApiVersions has no feature fields), () from 2.7 to
# 3.2 (no features, finalized epoch -1).
FEATURES: dict[str, tuple[FeatureLevels, ...] | None] = {
    name: None for name in NAMES[: NAMES.index("2.7")]
} | {
    "2.7": (), "2.8": (), "3.0": (), "3.1": (), "3.2": (),
    "3.3": _metadata_version(7), "3.4": _metadata_version(8), "3.5": _metadata_version(11),
    "3.6": _metadata_version(14), "3.7": _metadata_version(19), "3.8": _metadata_version(20),
    "3.9": (*_metadata_version(21), FeatureLevels("kraft.version", 0, 1, 1)),
    "4.0": _kraft_4(25, elr=0, share=(0, 0), streams=(0, 0)),
    "4.1": _kraft_4(27, elr=1, share=(1, 0), streams=(0, 0)),
    "4.2": _kraft_4(29, elr=1, share=(1, 1), streams=(1, 1)),
    "4.3": _kraft_4(30, elr=1, share=(1, 1), streams=(1, 1)),
    "4.4": _kraft_4(33, elr=1, share=(2, 2), streams=(1, 1)),
}  # fmt: skip

# KIP-511 (2.4): an ApiVersions request newer than the broker's is answered with ApiVersions' own
# range; before, the UNSUPPORTED_VERSION answer listed no APIs.
OWN_RANGE_ON_UNSUPPORTED_SINCE = "2.4"


def release_name(text: str) -> str:
    """The release `text` names ("3.9", "3.9.1", "0.10.2", "0.10.2.1", "v2.8"), else ValueError."""
    parts = text.strip().removeprefix("v").split(".")
    width = 3 if parts[0] == "0" else 2
    name = ".".join(parts[:width])
    if name not in RELEASES or not all(p.isdigit() for p in parts) or len(parts) > width + 1:
        known = ", ".join(NAMES)
        raise ValueError(f"unknown Kafka release {text!r}: one of {known}")
    return name


def at_least(name: str, other: str) -> bool:
    """Whether release `name` is `other` or later."""
    return NAMES.index(name) >= NAMES.index(other)
