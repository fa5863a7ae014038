"""What the package runs on: the layer's storage, durable checkpoints, crash recovery, engine workarounds.

`storage` holds the approval layer's own tables and opens its engine; `checkpointer` and
`recovery` keep `langgraph dev`'s pending approvals through a crash; `topology` refuses a
replica set that could not agree; `engine_compat` is the only place that reads the engine's
private names (each workaround with a test that fails once upstream fixes it); `tracing_inline` keeps
LangSmith's per-hook bookkeeping on the event loop while nothing is traced; `startup_heap` freezes
what the server starts with out of full garbage collections; `replicas` and
`port_check` start replica sets and `make dev`. Not for requests.
"""
