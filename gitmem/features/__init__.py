"""What people and the agent ask of memory: an edit (also in an editor), a revert, the audit log, the secret scan."""
