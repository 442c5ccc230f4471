"""The pytest plugin (entry point `pytest11`): the `kafkito` and `kafkito_session` fixtures, the
`@pytest.mark.kafkito(**props)` marker (`nodes=N`: a cluster of N nodes; `as_version="3.9"`: a
broker that is Kafka 3.9 to its clients), and broker properties from the ini file or the command line.

Properties, later ones winning: the `kafkito_properties` ini lines, `--kafkito-set NAME=VALUE`, then
(function-scoped fixture only) the markers, the closest to the test last.

`--kafkito-target=kafka` (or `bootstrap:HOST:PORT`) runs the same tests against Apache Kafka 4.4,
started by the plugin, or a running cluster (kafkito/testing/target.py): a test that steers the
broker, or configures it with the marker, is skipped there with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kafkito.testing.handle import KafkitoHandle
    from kafkito.testing.target import Target, TargetHandle

MARKER = "kafkito"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafkito", "kafkito broker fixtures")
    group.addoption(
        "--kafkito-set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a broker property for the kafkito fixtures (repeatable)",
    )
    group.addoption(
        "--kafkito-target",
        default="kafkito",
        metavar="kafkito|kafka|bootstrap:HOST:PORT",
        help="what the kafkito fixtures connect to: kafkito (default), an Apache Kafka 4.4 the plugin "
        "starts from Maven's jars (needs Java and Maven), or a running cluster",
    )
    parser.addini(
        "kafkito_properties",
        type="linelist",
        default=[],
        help="broker properties for the kafkito fixtures, one NAME=VALUE a line",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafkito(**props): broker properties for this test's `kafkito` fixture "
        "(Kafka names, dots written as underscores)",
    )


def configured_properties(config: pytest.Config) -> dict[str, str]:
    """The properties of the ini file and the command line, the command line winning."""
    props: dict[str, str] = {}
    for item in [*config.getini("kafkito_properties"), *config.getoption("kafkito_set")]:
        name, sep, value = str(item).partition("=")
        if not sep or not name.strip():
            raise pytest.UsageError(f"kafkito properties are NAME=VALUE, got {item!r}")
        props[name.strip()] = value.strip()
    return props


def marker_properties(node: pytest.Item) -> dict[str, Any]:
    """The `kafkito` markers' properties: module, class, then function markers, the closest winning."""
    props: dict[str, Any] = {}
    for mark in reversed(list(node.iter_markers(MARKER))):
        if mark.args:
            if len(mark.args) != 1 or not isinstance(mark.args[0], dict):
                raise pytest.UsageError("@pytest.mark.kafkito takes properties as keywords (or one dict)")
            props.update(mark.args[0])
        props.update(mark.kwargs)
    return props


def _check_names(named: dict[str, str]) -> None:
    """Fail the test on a marker property kafkito does not know, with the nearest known name, as
    `kafkito serve` warns about one (a misspelt name would otherwise leave Kafka's default in force)."""
    from kafkito.broker.config import Config, ConfigError
    from kafkito.broker.preflight import topic_default_properties, unknown_properties

    config = Config()
    for name, value in named.items():
        try:
            config.set(name, str(value))
        except ConfigError:  # a known name with a bad value: start() says so
            continue
    for name, close in unknown_properties(config, topic_default_properties()):
        hint = f": did you mean {close.replace('.', '_')} ({close})?" if close else ""
        pytest.fail(f"@pytest.mark.kafkito: unknown broker property {name}{hint}", pytrace=False)


def target_of(config: pytest.Config) -> Target:
    from kafkito.testing.target import Target

    return Target.parse(str(config.getoption("kafkito_target")))


@pytest.fixture(scope="session")
def kafkito_target(pytestconfig: pytest.Config) -> Iterator[TargetHandle | None]:
    """The cluster of `--kafkito-target` for the whole session (None: kafkito, a broker per fixture).
    The Apache Kafka the plugin starts gets the ini file's and `--kafkito-set`'s properties."""
    from kafkito.testing.target import KAFKA, KAFKITO, TargetHandle

    target = target_of(pytestconfig)
    if target.kind == KAFKITO:
        yield None
        return
    if target.kind != KAFKA:
        yield TargetHandle(target, target.bootstrap)
        return
    from kafkito.testing.apache_kafka import ApacheKafka

    kafka = ApacheKafka(configured_properties(pytestconfig)).start()
    try:
        yield TargetHandle(target, kafka.bootstrap_servers)
    finally:
        kafka.stop()


FIXTURES = ("kafkito", "kafkito_session")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """On a target other than kafkito, skip a test that configures kafkito's broker with the marker
    or whose code steers its kafkito fixture."""
    used = [name for name in FIXTURES if name in getattr(item, "fixturenames", ())]
    function = getattr(item, "function", None)
    if not used or function is None or target_of(item.config).kind == "kafkito":
        return
    from kafkito.testing.target import marker_refusal, skip_reason, steering_calls

    target = target_of(item.config)
    refusal = marker_refusal(target, marker_properties(item)) if "kafkito" in used else None
    if refusal is not None:
        pytest.skip(refusal)
    called = steering_calls(function, used)
    if called:
        pytest.skip(skip_reason(target, f"{called[0]}()"))


def _on_target(request: pytest.FixtureRequest, handle: TargetHandle) -> TargetHandle:
    """The target for a function-scoped `kafkito`: skipped if the markers configure the broker,
    and a Kafka of the plugin's own emptied first, as a fresh broker is."""
    from kafkito.testing.target import KAFKA, empty_cluster, marker_refusal

    refusal = marker_refusal(handle.target, marker_properties(request.node))
    if refusal is not None:
        pytest.skip(refusal)
    if handle.target.kind == KAFKA:
        empty_cluster(handle.bootstrap_servers)
    return handle


@pytest.fixture
def kafkito(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkitoHandle | TargetHandle]:
    """A broker of its own for this test: ephemeral 127.0.0.1 port, temporary data dir, no initial
    rebalance delay; properties from `@pytest.mark.kafkito(...)`, the ini file and `--kafkito-set`.
    `@pytest.mark.kafkito(nodes=3)` makes it a cluster of three nodes, `as_version="2.8"` a broker
    advertising and accepting only Kafka 2.8's API versions."""
    from kafkito.testing.handle import property_names, start

    if target_of(request.config).kind != "kafkito":
        yield _on_target(request, request.getfixturevalue("kafkito_target"))
        return
    props = configured_properties(request.config)
    marked = marker_properties(request.node)
    nodes = int(marked.pop("nodes", 1))
    as_version = marked.pop("as_version", None)
    named = property_names(marked)
    _check_names(named)
    props.update(named)
    handle = start(
        props,
        data_dir=tmp_path_factory.mktemp("kafkito"),
        nodes=nodes,
        as_version=None if as_version is None else str(as_version),
    )
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture(scope="session")
def kafkito_session(
    request: pytest.FixtureRequest, pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkitoHandle | TargetHandle]:
    """One broker shared by the whole session (properties from the ini file and `--kafkito-set`).

    Its clock, faults and topics are shared too: a test that advances the clock or injects faults
    is better served by the function-scoped `kafkito`.
    """
    from kafkito.testing.handle import start

    if target_of(pytestconfig).kind != "kafkito":
        yield request.getfixturevalue("kafkito_target")
        return
    handle = start(configured_properties(pytestconfig), data_dir=tmp_path_factory.mktemp("kafkito-session"))
    try:
        yield handle
    finally:
        handle.stop()
