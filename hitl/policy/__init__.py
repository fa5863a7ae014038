"""What a policy says: which tool calls wait for whom, how long, and which roles may run an agent.

`groups` (who decides: `owner` or a group; `Tiers`), `gates` (`ToolGate`), `interrupt_on`
(Deep Agents' spelling of it), `deadlines`, `quorum`
(several approvers), `allowances` ("always allow in this thread"), `overrides` (a run's policy
override against the agent's catalog) and `served` (the card each built agent carries). Pure
data and rules: the gate enforces them (`hitl.gate`).
"""
