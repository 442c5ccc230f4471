"""KIP-848 consumer groups: the group type of the next-generation group protocol."""
