"""The suite itself: `make test` writes nothing into the checkout (the compat matrix and the console's
screenshots go under pytest's temporary directory unless `make compat` / `make docs-images` name the
checked-in files), and `make test-fast` selects no test that needs node or kcat."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.compat.conftest import matrix_file
from tests.support.artifacts import COMPAT_MATRIX_ENV, DOCS_IMAGES_ENV, output_path

REPO = Path(__file__).resolve().parents[2]
FAST = "not compat and not spark and not slow"  # the Makefile's test-fast selection


def test_the_compat_matrix_goes_to_the_temporary_directory_unless_make_compat_names_it(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(COMPAT_MATRIX_ENV, raising=False)
    scratch = matrix_file(tmp_path_factory)
    assert scratch.is_relative_to(tmp_path_factory.getbasetemp()) and not scratch.is_relative_to(REPO)
    monkeypatch.setenv(COMPAT_MATRIX_ENV, str(REPO / "COMPATIBILITY.md"))
    assert matrix_file(tmp_path_factory) == REPO / "COMPATIBILITY.md"


def test_screenshots_go_to_the_temporary_directory_unless_make_docs_images_names_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DOCS_IMAGES_ENV, raising=False)
    assert output_path(DOCS_IMAGES_ENV, tmp_path) == tmp_path
    monkeypatch.setenv(DOCS_IMAGES_ENV, str(REPO / "docs" / "images"))
    assert output_path(DOCS_IMAGES_ENV, tmp_path) == REPO / "docs" / "images"


def test_no_test_builds_the_path_of_a_checked_in_output_itself() -> None:
    """Only the make targets' variables name COMPATIBILITY.md or docs/images as a place to write."""
    me = Path(__file__).resolve()
    patterns = ('/ "COMPATIBILITY.md"', '"docs" / "images"')
    offenders = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "tests").rglob("*.py"))
        if path.resolve() != me and any(pattern in path.read_text() for pattern in patterns)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "path",
    [
        "tests/transactions_e2e/test_kafkajs.py",  # node
        "tests/datapath/test_kcat.py",  # kcat
        "tests/broker/test_bootstrap_clients.py::test_kcat_lists_metadata",
    ],
)
def test_make_test_fast_selects_no_test_that_needs_node_or_kcat(path: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", FAST, path],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, done.stdout[-2000:]
