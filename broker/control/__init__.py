"""The HTTP control endpoint: the broker's steering (clock, faults, groups, topology) as a JSON API.

Off by default; `kafkito serve --control 127.0.0.1:PORT` serves it on the broker's event loop
(`server.py`, the routes in `api.py`), and `kafkito control ...` is its command-line client
(`cli.py` over `client.py`, which need no more than the standard library). The API is described
in docs/testing.md.
"""
