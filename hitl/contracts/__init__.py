"""The shapes everyone agrees on, defined once: interrupts, decisions, receipts, audit records, the inbox.

`shapes` defines them and publishes them as JSON Schema (`schemas/contracts.json`, which the
web app's types come from; `python -m hitl.contracts.shapes`); `answers` derives the answer an
interrupt accepts from its value; `edits` what an edit may say; `forms` the forms tools register;
`resume` builds a client's answer. No behaviour beyond checking shapes.
"""
