"""An answer to a pending approval: checked, accepted once, signed, recorded, published.

`pipeline` reads top to bottom as the story of one decision and calls each stage once:
`checks` (is the answer valid and is its sender allowed; `edits` for an edit's own checks),
`allowances`, `store` (claim, sign, audit and the command that applies it, in one transaction),
then the news for the inbox and metrics. `pending` is what waits and what an answer names,
`decision` the answer as sent and the decision it became. `withdrawals` records a supervisor's
removal of an approval the same way. Not for the trail's storage (`server.records`) or for who
is calling (`server.identity`).
"""
