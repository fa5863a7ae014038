"""Who is calling: bearer tokens (`HITL_USERS`), OIDC JWTs, the user directory, the server's own calls.

Answers "which person, with which role" and nothing more; what they may do is decided by
admission and the decision checks. Never trusts a name a client writes into a body.
"""
