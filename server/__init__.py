"""The server side of the approval layer: what the LangGraph server mounts, by what a request passes through.

- `identity`: who is calling (tokens, OIDC, the user directory).
- `admission`: what a client may send (runs, state writes, assistants, bodies): allowlists.
- `decisions`: an answer to a pending approval, checked, accepted once, signed and recorded
  (`decisions.pipeline` tells the story top to bottom).
- `records`: the audit trail, receipts, the thread records and their history.
- `coordination`: what makes replicas agree (claims, leases, run starts, the pending index and
  its broadcast, the watcher, the reconciler, the notice outbox, the layer's own storage).
- `insight`: metrics and analytics. `channels`: Slack, e-mail and webhook notices.
- `runtime`: the engine it runs on (checkpointer, crash recovery, topology, engine workarounds,
  replica sets). `http`: the Auth handlers, the custom app and its routes (what `langgraph.json` names).
It knows no agent: what it knows of one it reads from the served graph (`hitl.policy.served`).
"""
