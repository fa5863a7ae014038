"""What was decided and by whom, kept and proven: the audit trail, receipts, thread records, history.

`trail` is where the chained audit records live (one chain per thread, appended under a lock on
its head), `audit` what a record says, `receipts` the signed receipts and their verification,
`threads` what the server records beside a thread (its graph, escalations), `history` what the
analytics read. It decides nothing.
"""
