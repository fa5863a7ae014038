"""How the humans in the loop are doing: Prometheus metrics and approval analytics, for staff.

Read-only over the audit trail and the pending index; never changes a decision.
"""
