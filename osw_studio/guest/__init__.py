"""The guest server: the OSWorld-compatible HTTP API that runs inside the guest desktop."""
