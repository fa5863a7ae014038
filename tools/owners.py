"""Whose business records a tool call may touch: the person the run works for.

That is the thread's owner (`hitl.gate.caller.acting_for`), also when a reviewer's approval
resumes the run. A customer (requester) works on their own orders and bookings; staff
(reviewer, supervisor) on everyone's. A run that names nobody is refused (`NobodyNamedError`,
a tool error), never widened to everyone; only a graph run in-process that says so
(`hitl.gate.caller.in_process`) works on every record. Read at call time, never at build time.
"""

from __future__ import annotations

from hitl.gate.caller import acting_for


def records_owner() -> str | None:
    """The identity whose records the running tool may see, or None for every record (staff, in-process).

    Raises:
        NobodyNamedError: the run names nobody it works for (see `hitl.gate.caller.acting_for`).
    """
    caller = acting_for()
    if caller is None or caller.is_staff:
        return None
    return caller.identity


def acting_person() -> str | None:
    """The identity the running tool acts for (it owns what the call creates), or None in-process.

    Raises:
        NobodyNamedError: the run names nobody it works for (see `hitl.gate.caller.acting_for`).
    """
    caller = acting_for()
    return None if caller is None else caller.identity
