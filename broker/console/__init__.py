"""The web console: topics and their configs, messages across partitions, consumer groups with lag and a
rebalance timeline, transactions, ACLs, SCRAM users, broker configs and feature levels, as HTML and JSON.

Off by default; `kafkito serve --http 127.0.0.1:PORT` serves it on the broker's own event loop
(`sites.py`, shared with the control endpoint when both name one port). Nothing here is imported
unless the console is on. The pages and the `/api/...` JSON are described in docs/console.md.
"""
