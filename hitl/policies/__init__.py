"""The approval policy of each served agent and subagent, beside the gates that enforce it."""
