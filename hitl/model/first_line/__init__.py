"""The first-line reviewer's model side: what it is asked and answers, its offline rules, how it is built.

`verdict` is the exchange with the model (a review request, the `FirstLineVerdict` it answers with),
`triage` the scripted classifier's rules (offline, deterministic, as the scripted chat model is), and
`classifier` builds the one a policy names: scripted, or `provider:model` with structured output.
Which calls reach it and what becomes of its answer are the policy's and the server's.
"""
