"""The shapes everyone agrees on, defined once: interrupts, decisions, receipts, audit records, the inbox.

`interrupts` is what the layer asks, `decisions` what a person answers, `records` what the server
keeps and serves (receipts, audit, inbox, allowances, `GET /me`), `run_context` what a run may pass;
`asks` is a client's side of them (which kind an interrupt is, what it asks of whom, the resume by tool
call id); `publish` writes them as JSON Schema (`schemas/contracts.json`, with `schemas/examples.json`'s
values of each interrupt kind; what the web app checks and types against: `make schemas`). `answers`
derives the answer an interrupt accepts from its value; `edits` what an edit may say; `forms` the forms
tools register; `published_schema` caches an answer's schema. No behaviour beyond checking shapes.
"""
