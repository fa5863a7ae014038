"""What makes many replicas one server: shared rows in the layer's own storage, and what reads them.

Claims on interrupts and run starts, the watcher's lease and its fenced acts, the pending index
of inbox rows (`inbox_rows`) and its broadcast between replicas, the inbox read from it, the
watcher (deadlines, notices), the reconciler (decisions whose run never finished) and the
notice outbox, all on the layer's own tables (`server.ledger.storage`). Each process's index
is a cache of the engine's truth, kept in step by the broadcast. Not for what a decision is
(`server.decisions`).
"""
