"""Reading a control request's JSON body: typed fields with defaults, one clear error per bad field."""

from __future__ import annotations

from typing import Any, TypeVar, overload

DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 3600.0

T = TypeVar("T")
_REQUIRED: Any = object()


class BodyError(ValueError):
    """A field missing or of the wrong type (the endpoint answers 400 with this message)."""


class Body:
    """The fields of one JSON object, read by type."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def _get(self, name: str, default: Any) -> tuple[bool, Any]:
        """(True, the value) when the field is given, else (False, the default)."""
        value = self._data.get(name)
        if value is not None:
            return True, value
        if default is _REQUIRED:
            raise BodyError(f"{name!r} is required")
        return False, default

    @overload
    def integer(self, name: str, *, minimum: int | None = None) -> int: ...

    @overload
    def integer(self, name: str, *, default: T, minimum: int | None = None) -> int | T: ...

    def integer(self, name: str, *, default: Any = _REQUIRED, minimum: int | None = None) -> Any:
        given, value = self._get(name, default)
        if not given:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise BodyError(f"{name!r} must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise BodyError(f"{name!r} must be at least {minimum}, got {value}")
        return value

    @overload
    def text(self, name: str) -> str: ...

    @overload
    def text(self, name: str, *, default: T) -> str | T: ...

    def text(self, name: str, *, default: Any = _REQUIRED) -> Any:
        given, value = self._get(name, default)
        if not given:
            return value
        if not isinstance(value, str):
            raise BodyError(f"{name!r} must be a string, got {value!r}")
        return value

    def count(self, name: str, default: int) -> int | None:
        """A positive count; JSON null means no limit (None), an absent field the default."""
        if name in self._data and self._data[name] is None:
            return None
        return self.integer(name, default=default, minimum=1)

    @overload
    def name_or_number(self, name: str) -> str | int: ...

    @overload
    def name_or_number(self, name: str, *, required: bool) -> str | int | None: ...

    def name_or_number(self, name: str, *, required: bool = True) -> str | int | None:
        """A Kafka API or error, by name ("Produce", "NOT_LEADER_OR_FOLLOWER") or by number."""
        given, value = self._get(name, _REQUIRED if required else None)
        if not given:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise BodyError(f"{name!r} must be a name or a number, got {value!r}")
        if isinstance(value, str) and value.lstrip("-").isdigit():
            return int(value)
        return value

    def timeout(self) -> float:
        """A wait's `timeout` in seconds (default 30)."""
        _, value = self._get("timeout", DEFAULT_TIMEOUT_S)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BodyError(f"'timeout' must be a number of seconds, got {value!r}")
        if not 0 <= value <= MAX_TIMEOUT_S:
            raise BodyError(f"'timeout' must be between 0 and {MAX_TIMEOUT_S:g} seconds, got {value}")
        return float(value)
