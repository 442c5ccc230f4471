"""The broker's durable admin state: ACLs, client quotas and SCRAM credentials (`SecurityStore`).

`acls.py`, `quotas.py` and `scram.py` hold each kind's rules (Kafka's validation, matching and the
authorizer lookup) on plain in-memory state; `store.py` applies changes to them through the
append-only `journal.py`, so that they survive a restart or a crash. Nothing here enforces anything:
the security issue's authorizer reads `SecurityStore.acls`, its SASL/SCRAM reads `SecurityStore.scram`.
"""
