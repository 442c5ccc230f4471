"""The wire schemas themselves: each API's request and response spec in Kafka 4.4 (from the
kafka-clients jar) against the one the codec uses (kafka-python's JSON specs, or kafkito's own under
protocol/schemas), within the versions Kafka serves: valid and flexible versions, and each field's
presence, type, nullability, tag and tagged versions, struct by struct."""

from __future__ import annotations

from typing import Any

from kafkito.protocol.codec import MESSAGES, REQUESTS, RESPONSES
from tests.conformance.framework import Outcome
from tests.conformance.kafka_specs import ApiSpec
from tests.conformance.normalise import Difference

VersionSet = frozenset[int]


def versions(spec: str | None, low: int, high: int) -> VersionSet:
    """The versions of `low..high` that a spec string ("3+", "0-7", "5", "none") names."""
    if spec is None or spec == "none":
        return frozenset()
    if spec.endswith("+"):
        a, b = int(spec[:-1]), high
    elif "-" in spec:
        a, b = (int(x) for x in spec.split("-"))
    else:
        a = b = int(spec)
    return frozenset(range(max(a, low), min(b, high) + 1))


def show(vs: VersionSet) -> str:
    if not vs:
        return "none"
    s = sorted(vs)
    return f"{s[0]}-{s[-1]}" if s == list(range(s[0], s[-1] + 1)) else ",".join(map(str, s))


def compare_api(spec: ApiSpec) -> Outcome:
    """One outcome per API: its request and response schemas compared."""
    label = f"{spec.name} schema"
    if spec.api_key not in MESSAGES:
        d = Difference("codec", "a schema", "<absent>")
        return Outcome(f"schema-{spec.api_key:02d}-{spec.name}", "schema", 1, [(label, d)], [label])
    diffs: list[tuple[str, Difference]] = []
    for kind, ours_cls, theirs in (
        ("request", REQUESTS, spec.request),
        ("response", RESPONSES, spec.response),
    ):
        ours: dict[str, Any] = ours_cls[spec.api_key].json
        low, high = _range(theirs["validVersions"])
        mine = versions(ours.get("validVersions"), low, high)
        theirs_v = versions(theirs["validVersions"], low, high)
        if mine != theirs_v:
            diffs.append((label, Difference(f"{kind}.validVersions", show(theirs_v), show(mine))))
        for key in ("flexibleVersions",):
            a, b = versions(theirs.get(key), low, high), versions(ours.get(key), low, high)
            if a != b:
                diffs.append((label, Difference(f"{kind}.{key}", show(a), show(b))))
        structs = {s["name"]: s for s in theirs.get("commonStructs", [])}
        our_structs = {s["name"]: s for s in ours.get("commonStructs", [])}
        diffs += [
            (label, d)
            for d in _fields(
                kind, theirs.get("fields", []), ours.get("fields", []), low, high, structs, our_structs
            )
        ]
    return Outcome(f"schema-{spec.api_key:02d}-{spec.name}", "schema", 2, diffs, [label])


def _range(valid: str) -> tuple[int, int]:
    vs = versions(valid, 0, 1000)
    return (min(vs), max(vs)) if vs else (0, -1)


def _fields(  # noqa: C901 - one pass over a struct's fields, each check a line
    path: str,
    theirs: list[dict[str, Any]],
    ours: list[dict[str, Any]],
    low: int,
    high: int,
    structs: dict[str, Any],
    our_structs: dict[str, Any],
) -> list[Difference]:
    out: list[Difference] = []
    mine = {f["name"]: f for f in ours}
    for f in theirs:
        here = versions(f.get("versions"), low, high)
        if not here:
            continue
        p = f"{path}.{f['name']}"
        o = mine.get(f["name"])
        if o is None:
            out.append(Difference(p, f"versions {show(here)}", "<absent>"))
            continue
        for key in ("versions", "nullableVersions", "taggedVersions"):
            a = versions(f.get(key), low, high) & (
                here if key != "versions" else frozenset(range(low, high + 1))
            )
            b = versions(o.get(key), low, high) & (
                here if key != "versions" else frozenset(range(low, high + 1))
            )
            if a != b:
                out.append(Difference(f"{p}.{key}", show(a), show(b)))
        for key in ("type", "tag"):
            if f.get(key) != o.get(key):
                out.append(Difference(f"{p}.{key}", f.get(key), o.get(key)))
        sub_t = f.get("fields") or structs.get(f["type"].removeprefix("[]"), {}).get("fields")
        sub_o = o.get("fields") or our_structs.get(o["type"].removeprefix("[]"), {}).get("fields")
        if sub_t:
            out += _fields(p, sub_t, sub_o or [], low, high, structs, our_structs)
    for name, o in mine.items():
        if name not in {f["name"] for f in theirs} and versions(o.get("versions"), low, high):
            out.append(
                Difference(
                    f"{path}.{name}", "<absent>", f"versions {show(versions(o.get('versions'), low, high))}"
                )
            )
    return out
