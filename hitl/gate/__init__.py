"""The gate in the graph: pauses gated calls, applies answers, and runs a call only when it was cleared.

`gate` is the `ApprovalGate` middleware: which calls pause and which may run. Its flows are
`batched` (one interrupt per model turn) and `per_call`; `review_requests` builds what they send,
`deciders` judges who may decide, `run_start` checks who runs the agent and records the run's
policy. `caller` is who the server says runs the graph; `trusted_state` the sealed state only the
gate trusts; `tool_outcome` what a failing tool becomes; `langchain_hitl` the only private
LangChain names used; `timing` the pause timer. The server's checks come first; this is the
graph's own wall.
"""
