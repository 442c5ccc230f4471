"""Issue 5 acceptance at the broker level: real clients, restarts, crashes, idempotence, admin, bench."""
