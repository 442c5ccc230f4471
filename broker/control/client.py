"""A client of the control endpoint over the standard library's urllib (what `kafkito control` uses)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

REQUEST_TIMEOUT_S = 10.0  # on top of a wait's own timeout


class ControlClientError(Exception):
    """The endpoint refused the request or could not be reached: the message is one line for a user."""

    def __init__(self, message: str, status: int | None = None, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body or {}


def normalize_url(text: str) -> str:
    """`http://host:port`, or `host:port` meaning the same."""
    text = text.strip().rstrip("/")
    if "://" not in text:
        text = f"http://{text}"
    parsed = urllib.parse.urlsplit(text)
    if parsed.scheme != "http" or not parsed.hostname:
        raise ControlClientError(f"not a control endpoint address: {text!r} (expected http://HOST:PORT)")
    return text


class ControlClient:
    """Calls on one endpoint; each returns the decoded JSON object of a successful answer."""

    def __init__(self, url: str) -> None:
        self.url = normalize_url(url)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None, wait_s: float = 0) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Accept", "application/json")
        if method != "GET":  # the endpoint refuses a write of any other type (415), bodiless ones too
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=wait_s + REQUEST_TIMEOUT_S) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            raise _refusal(exc) from None
        except (TimeoutError, urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ControlClientError(f"cannot reach the control endpoint at {self.url}: {reason}") from None
        except json.JSONDecodeError:
            raise ControlClientError(f"{self.url}{path} did not answer JSON") from None


def _refusal(exc: urllib.error.HTTPError) -> ControlClientError:
    """The endpoint's `{"error": ...}`, or the first line of a plain-text refusal (the browser guard's)."""
    try:
        raw = exc.read()
    except OSError:
        raw = b""
    try:
        body = json.loads(raw or b"{}")
    except json.JSONDecodeError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    text = raw.decode("utf-8", "replace").strip().splitlines()
    plain = text[0][:200] if text and not body else ""
    message = body.get("error") or plain or f"HTTP {exc.code} {exc.reason}"
    return ControlClientError(str(message), exc.code, body)
