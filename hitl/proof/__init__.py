"""Proof of what was decided: sealed state, signed receipts and their keys, the audit chain, verification.

Anyone can check a decision with the public keys (`GET /.well-known/jwks.json`) and the trail;
the gate runs a call only under a receipt that matches it (`receipt_check`). Not for deciding.
"""
