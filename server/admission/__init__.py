"""What a client may send, before anything is saved: runs, state writes, assistant changes, bodies.

Every wall here is an allowlist (the shapes, keys and roles that pass); a refusal is a 4xx that
names what is wrong. Admission never accepts a decision itself: a resume goes on to `server.decisions`.
"""
