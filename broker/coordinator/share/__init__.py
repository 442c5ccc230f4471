"""KIP-932 share groups: the third group type of the coordinator (group, members, assignment, records)."""
