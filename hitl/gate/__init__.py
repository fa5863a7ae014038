"""The gate in the graph: pauses gated calls, applies answers, and runs a call only when it was cleared.

`gate` is the `ApprovalGate` middleware; `caller` who the server says runs the graph;
`trusted_state` the sealed state only the gate trusts; `malformed_calls` and `tool_outcome`
what a bad reply or a failing tool becomes; `langchain_hitl` the only private LangChain names
used; `timing` the pause timer. The server's checks come first; this is the graph's own wall.
"""
