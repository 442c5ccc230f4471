"""What a consumer group subscribes to: topic names, regular expressions resolved against the
topics, the topic ids the assignor gets, and the metadata hash whose change bumps the group epoch.

Regular expressions are RE2 (as Kafka's RE2/J), matched against the whole topic name, through the
`google-re2` package; internal topics (`__` prefix) never match. Without `google-re2` installed, the
standard `re` module is used instead, which accepts a superset of RE2 (look-arounds, back-references).
"""

from __future__ import annotations

import functools
import struct
import uuid
from collections.abc import Callable, Iterable

from kafkito.broker.coordinator.consumer.member import ConsumerGroupMember
from kafkito.broker.coordinator.consumer.topics import TopicInfo, TopicsView

Matcher = Callable[[str], bool]
_Engine = tuple[Callable[[str], Matcher], tuple[type[Exception], ...]]


@functools.cache
def regex_engine() -> _Engine:
    """(compile, its errors) of the regex engine, imported on the first regex subscription, not at
    start-up (google-re2 and what it imports cost every start ~2 ms)."""
    try:
        import re2
    except ImportError:  # pragma: no cover - google-re2 is a dependency; this is the fallback
        import re

        def compile_re(pattern: str) -> Matcher:
            compiled = re.compile(pattern)
            return lambda name: compiled.fullmatch(name) is not None

        return compile_re, (re.error,)
    options = re2.Options()
    options.log_errors = False

    def compile_re2(pattern: str) -> Matcher:
        compiled = re2.compile(pattern, options=options)
        return lambda name: compiled.fullmatch(name) is not None

    return compile_re2, (re2.error,)


@functools.lru_cache(maxsize=1024)
def compile_regex(pattern: str) -> Matcher | None:
    """The matcher of `pattern`, or None when it is not a valid regular expression."""
    compile_pattern, errors = regex_engine()
    try:
        return compile_pattern(pattern)
    except errors:
        return None
    except (ValueError, TypeError):
        return None


def resolve_regex(pattern: str, names: Iterable[str]) -> tuple[str, ...]:
    """The (sorted) topic names `pattern` matches; internal topics never match."""
    matcher = compile_regex(pattern)
    if matcher is None:
        return ()
    return tuple(sorted(n for n in names if not n.startswith("__") and matcher(n)))


def member_topic_names(member: ConsumerGroupMember, resolved: Callable[[str], tuple[str, ...]]) -> set[str]:
    """The names a member subscribes to: its list plus what its regex resolved to."""
    names = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        names.update(resolved(member.subscribed_topic_regex))
    return names


def member_topic_ids(
    member: ConsumerGroupMember, resolved: Callable[[str], tuple[str, ...]], topics: TopicsView
) -> frozenset[uuid.UUID]:
    ids = set()
    for name in member_topic_names(member, resolved):
        info = topics.by_name(name)
        if info is not None:
            ids.add(info.topic_id)
    return frozenset(ids)


def metadata_hash(names: Iterable[str], topics: TopicsView) -> int:
    """A 64-bit signed hash of the subscribed topics' ids, names and partition counts: a change
    (a topic created, deleted or grown) bumps the group epoch."""
    infos: list[TopicInfo] = []
    for name in names:
        info = topics.by_name(name)
        if info is not None:
            infos.append(info)
    if not infos:
        return 0
    import hashlib  # here: its OpenSSL module costs every start ~1 ms, and only consumer groups hash

    digest = hashlib.blake2b(digest_size=8)
    for info in sorted(infos, key=lambda i: i.name):
        digest.update(info.topic_id.bytes)
        digest.update(info.name.encode())
        digest.update(struct.pack(">i", info.num_partitions))
    value: int = struct.unpack(">q", digest.digest())[0]
    return value
