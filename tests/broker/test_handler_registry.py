"""The handler registry states each API's key and versions; they are the handler module's own."""

from __future__ import annotations

import importlib

from kafkito.broker.handlers import APIS, HANDLERS, supported_versions


def test_each_row_is_its_modules_key_and_versions() -> None:
    for name, key, lo, hi in APIS:
        module = importlib.import_module(f"kafkito.broker.handlers.{name}")
        assert (key, (lo, hi)) == (module.API_KEY, module.VERSIONS), f"{name}: its row in APIS"
        assert HANDLERS[key] is module


def test_keys_are_unique_and_listed_in_order() -> None:
    keys = [key for _, key, _, _ in APIS]
    assert len(set(keys)) == len(keys)
    assert [k for k, _, _ in supported_versions()] == sorted(keys)
    assert set(HANDLERS) == set(keys) and len(HANDLERS) == len(keys)
