"""A property of `@pytest.mark.kafkito(...)` that kafkito does not know fails the test with the nearest
known name, as `kafkito serve` warns about one (run in a fresh pytest process by `pytester`)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = """
import pytest


@pytest.mark.kafkito(num_partition=3)
def test_misspelt(kafkito):
    pass


@pytest.mark.kafkito(no_such_thing_at_all=1)
def test_unknown(kafkito):
    pass


@pytest.mark.kafkito(num_partitions=3)
def test_known(kafkito):
    assert kafkito.properties["num.partitions"] == "3"
"""


def test_an_unknown_marker_property_fails_the_test_with_the_nearest_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.kafkito: unknown broker property num.partition: did you mean num_partitions "
            "(num.partitions)?*",
            "*@pytest.mark.kafkito: unknown broker property no.such.thing.at.all",
        ]
    )
