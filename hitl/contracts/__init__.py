"""The shapes everyone agrees on, defined once: interrupts, decisions, receipts, audit records, the inbox.

`interrupts` is what the layer asks, `decisions` what a person answers, `records` what the server
keeps and serves (receipts, audit, inbox, allowances), `run_context` what a run may pass; `publish`
writes them as JSON Schema (`schemas/contracts.json`, which the web app's types come from;
`python -m hitl.contracts.publish`). `answers` derives the answer an interrupt accepts from its
value; `edits` what an edit may say; `forms` the forms tools register; `resume` builds a client's
answer; `published_schema` caches an answer's schema. No behaviour beyond checking shapes.
"""
