"""The API versions of a broker pinned to an older Kafka (`kafkito.as.version`, `serve --as-version`):
what it advertises and what it accepts, built once per release from `protocol/kafka_releases.py`.

A pinned broker serves an API when both that release and kafkito have it, at the versions both have.
An API the release lacks is unknown to it (dispatch closes the connection, as Kafka does for an
unknown key); one the release has and kafkito does not serve is answered UNSUPPORTED_VERSION, as
on an unpinned broker. From 4.0 the release's lowest versions are Kafka 4's (KIP-896), and Produce is
advertised from v0 but accepted from v3, as Kafka 4 does (KAFKA-18659).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from kafkito.broker.handlers import KAFKA4_MINIMUMS, VERSIONS
from kafkito.protocol import kafka_releases
from kafkito.protocol.kafka_releases import FeatureLevels, Range


@dataclass(frozen=True, slots=True)
class PinnedVersions:
    """One release's ranges, by API key: `advertised` in ApiVersions, `accepted` by dispatch, and
    `kafka` (the release's own, for the APIs kafkito does not serve)."""

    release: str
    advertised: dict[int, Range]
    accepted: dict[int, Range]
    kafka: dict[int, Range]
    features: tuple[FeatureLevels, ...] | None

    @property
    def own_range_on_unsupported(self) -> bool:
        """KIP-511 (2.4): a too-new ApiVersions request is told ApiVersions' own range (else none)."""
        return kafka_releases.at_least(self.release, kafka_releases.OWN_RANGE_ON_UNSUPPORTED_SINCE)


@cache
def pinned(text: str) -> PinnedVersions:
    """The ranges of the release `text` names ("3.9", "2.8.1": `kafka_releases.release_name`), built
    on first use; ValueError for a release it does not know."""
    release = kafka_releases.release_name(text)
    kafka = kafka_releases.RELEASES[release]
    kafka4 = kafka_releases.at_least(release, "4.0")
    advertised: dict[int, Range] = {}
    accepted: dict[int, Range] = {}
    for key, (kafka_lo, kafka_hi) in kafka.items():
        ours = VERSIONS.get(key)
        if ours is None:
            continue
        lo, hi = max(kafka_lo, ours[0]), min(kafka_hi, ours[1])
        if lo > hi:
            continue
        advertised[key] = (lo, hi)
        accepted[key] = (max(lo, KAFKA4_MINIMUMS.get(key, 0)) if kafka4 else lo, hi)
    return PinnedVersions(release, advertised, accepted, kafka, kafka_releases.FEATURES[release])
