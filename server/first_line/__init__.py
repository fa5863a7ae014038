"""The first-line reviewer inside the server: a model that decides the routine calls a policy hands it.

`review` is what the gate asks (registered at start-up, `hitl.model.first_line.review.keep_in`): it
classifies a call within the reviewer's bounds and records an approve or reject through the same
checks, acceptance, signing and trail as a person's decision, or refers it to people; `ledger` keeps
every verdict (replayed when a node runs again; its circuit breaker; the samples people check
afterwards); `samples` serves those to people (`GET /first-line/samples`, `POST .../{thread}/{call}`).
Not for who may decide what (the policy's, `hitl.policy`) or how the model is built (`hitl.model`).
"""
