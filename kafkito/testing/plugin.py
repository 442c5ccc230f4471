"""The pytest plugin (entry point `pytest11`): the `kafkito` and `kafkito_session` fixtures, the
`@pytest.mark.kafkito(**props)` marker (`nodes=N`: a cluster of N nodes; `as_version="3.9"`: a
broker that is Kafka 3.9 to its clients), and broker properties from the ini file or the command line.

Properties, later ones winning: the `kafkito_properties` ini lines, `--kafkito-set NAME=VALUE`, then
(function-scoped fixture only) the markers, the closest to the test last.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kafkito.testing.handle import KafkitoHandle

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


@pytest.fixture
def kafkito(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkitoHandle]:
    """A broker of its own for this test: ephemeral 127.0.0.1 port, temporary data dir, no initial
    rebalance delay; properties from `@pytest.mark.kafkito(...)`, the ini file and `--kafkito-set`.
    `@pytest.mark.kafkito(nodes=3)` makes it a cluster of three nodes, `as_version="2.8"` a broker
    advertising and accepting only Kafka 2.8's API versions."""
    from kafkito.testing.handle import property_names, start

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
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkitoHandle]:
    """One broker shared by the whole session (properties from the ini file and `--kafkito-set`).

    Its clock, faults and topics are shared too: a test that advances the clock or injects faults
    is better served by the function-scoped `kafkito`.
    """
    from kafkito.testing.handle import start

    handle = start(configured_properties(pytestconfig), data_dir=tmp_path_factory.mktemp("kafkito-session"))
    try:
        yield handle
    finally:
        handle.stop()
