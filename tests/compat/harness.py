"""Running one scenario for every client at once and recording each client's cell."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.compat.clients.base import Driver
from tests.compat.matrix import Matrix, Outcome


def run_for_clients(
    matrix: Matrix, scenario: str, drivers: Sequence[Driver], body: Callable[[Driver], str | None]
) -> None:
    """Run `body(driver)` for every client concurrently (each on its own topic and group); a client
    that lists the scenario as not applicable gets its reason recorded instead. `body` returns an
    optional note for the cell and raises on failure. Fails the test if any client failed."""
    applicable = []
    for d in drivers:
        reason = d.not_applicable.get(scenario)
        if reason:
            matrix.record(scenario, d.name, Outcome.NOT_APPLICABLE, reason)
        else:
            applicable.append(d)
    failures = []
    with ThreadPoolExecutor(max(1, len(applicable)), thread_name_prefix=scenario) as pool:
        futures = [(d, pool.submit(body, d)) for d in applicable]
        for d, future in futures:
            exc = future.exception()
            if exc is None:
                note = "; ".join(n for n in (d.notes.get(scenario), future.result()) if n)
                matrix.record(scenario, d.name, Outcome.PASS, note)
            else:
                matrix.record(
                    scenario, d.name, Outcome.FAIL, str(exc).splitlines()[0] if str(exc) else repr(exc)
                )
                failures.append(f"--- {d.name} ---\n" + "".join(traceback.format_exception(exc)))
    if failures:
        pytest.fail(f"{scenario}: {len(failures)} client(s) failed\n" + "\n".join(failures), pytrace=False)


def run_together(
    matrix: Matrix, scenario: str, drivers: Sequence[Driver], body: Callable[[], str | None]
) -> None:
    """A scenario all clients take part in at once (one cell per client, one shared outcome)."""
    for d in drivers:
        assert scenario not in d.not_applicable, f"{d.name} cannot take part in {scenario}"
    try:
        note = body()
    except BaseException as exc:
        for d in drivers:
            matrix.record(scenario, d.name, Outcome.FAIL, str(exc).splitlines()[0] if str(exc) else repr(exc))
        raise
    for d in drivers:
        matrix.record(
            scenario, d.name, Outcome.PASS, "; ".join(n for n in (d.notes.get(scenario), note) if n)
        )
