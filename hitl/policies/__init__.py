"""The approval policy of each served agent and subagent, beside the gates that enforce it.

Each policy is an `interrupt_on` value (tool name to `ToolGate`), as `hitl.create_deep_agent` and
`build_deep_agent` take it.
"""
