"""The requests the scripted model understands, written once for the demo and the tests.

Each constant is a natural request a person would type; the scripted model also accepts
close variants (see the regular expressions in the per-agent scripts).
"""

REFUND_IN_FULL = "Order A1024 arrived broken, please refund it in full."
REFUND_PARTIAL = "Refund 59 on order A2048"
EMAIL_CUSTOMER = "Email the customer of A1024 that the refund is on its way"
REFUND_WITHOUT_ORDER = "Please refund my order, it arrived broken."
REFUND_VIA_SPECIALIST = "Ask the refund specialist to refund 59 on order A2048"
REFUND_AND_EMAIL = "Refund order A1024 in full and email the customer that the refund is on its way"


def refund_in_full(order_id: str) -> str:
    """A full-refund request for another order."""
    return REFUND_IN_FULL.replace("A1024", order_id)


def refund_amount(amount: float, order_id: str) -> str:
    """A partial-refund request."""
    return f"Refund {amount:g} on order {order_id}"


def email_customer(order_id: str) -> str:
    """An e-mail-the-customer request."""
    return EMAIL_CUSTOMER.replace("A1024", order_id)


def via_specialist(request: str) -> str:
    """The same request, handed to the refund specialist subagent."""
    return f"Ask the refund specialist to {request[0].lower()}{request[1:]}"


def refund_and_email(order_id: str) -> str:
    """A turn that needs two gated tool calls at once."""
    return REFUND_AND_EMAIL.replace("A1024", order_id)
