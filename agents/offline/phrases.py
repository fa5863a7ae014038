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
REFUND_AND_ASK = "Refund order A1024 in full and ask me whether I would like store credit instead"
EMAIL_AND_ASK = "Email the customer of A1024 that the refund is on its way and ask me which address to use"


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


def refund_and_ask(order_id: str) -> str:
    """A turn with a reviewer's refund and a question only the thread's owner answers."""
    return REFUND_AND_ASK.replace("A1024", order_id)


def email_and_ask(order_id: str) -> str:
    """A turn with a reviewer's e-mail and a question only the thread's owner answers."""
    return EMAIL_AND_ASK.replace("A1024", order_id)


LOOK_UP_INVOICE = "Look up invoice INV-1024"
VOID_INVOICE = "Void invoice INV-2048"
INVOICE_PAYMENT = "How was invoice INV-1024 paid?"
CREDIT_INVOICE = "Credit 20 on invoice INV-1024"


def look_up_invoice(invoice_id: str) -> str:
    """A lookup of another invoice (the billing MCP server's read-only tool)."""
    return LOOK_UP_INVOICE.replace("INV-1024", invoice_id)


def void_invoice(invoice_id: str) -> str:
    """Voiding another invoice (billing's destructive tool)."""
    return VOID_INVOICE.replace("INV-2048", invoice_id)


def invoice_payment(invoice_id: str) -> str:
    """The payment method of another invoice (read-only, and named by the support policy: gated)."""
    return INVOICE_PAYMENT.replace("INV-1024", invoice_id)


def credit_invoice(amount: float, invoice_id: str) -> str:
    """A credit note on another invoice (billing asks the customer why, then to confirm)."""
    return f"Credit {amount:g} on invoice {invoice_id}"


FIND_FLIGHT = "Find me a flight from Berlin to Lisbon on 2026-12-18"
BOOK_CHEAPEST = "Book the cheapest one"
FIND_AND_BOOK_CHEAPEST = "Find me a flight from Berlin to Lisbon on 2026-12-18 and book the cheapest one"

ARCHIVE_OLD_ORDERS = "Archive orders older than 2025 into orders_archive.csv and delete them from the table"
DELETE_OLD_LOG = "Delete the file tmp/old.log"
DEPLOY_TO_PRODUCTION = "Deploy version 1.4 to production"
ARCHIVE_AND_DELETE_LOG = (
    "Archive orders older than 2025 into orders_archive.csv, delete them from the table "
    "and delete the file tmp/old.log"
)
WRITE_RELEASE_NOTE = "Write 'Release 1.4 is live' to notes/release.txt"


def find_and_book(origin: str, destination: str, date: str, choice: str = "the cheapest one") -> str:
    """A search-and-book request in one message (the scripted model has no memory of earlier turns)."""
    return f"Find me a flight from {origin} to {destination} on {date} and book {choice}"


def cancel_booking(booking_id: str) -> str:
    """A cancellation request."""
    return f"Cancel booking {booking_id}"


def delete_files(*paths: str) -> str:
    """'Delete the file a' or 'Delete the files a, b and c': one delete_file call per path."""
    if len(paths) == 1:
        return f"Delete the file {paths[0]}"
    return f"Delete the files {', '.join(paths[:-1])} and {paths[-1]}"


def write_file(text: str, path: str) -> str:
    """A request to write `text` into the workspace file `path`."""
    return f"Write '{text}' to {path}"


def read_file(path: str) -> str:
    """A request to read a workspace file."""
    return f"Read the file {path}"


def run_sql(statement: str) -> str:
    """A request to run one SQL statement."""
    return f"Run this SQL: {statement}"


def deploy(version: str, environment: str = "production") -> str:
    """A deployment request, handled by the deployer subagent."""
    return f"Deploy version {version} to {environment}"


def via_file_manager(request: str) -> str:
    """The same request, handed to the file_manager subagent."""
    return f"Ask the file manager to {request[0].lower()}{request[1:]}"


def via_general_purpose(request: str) -> str:
    """The same request, handed to Deep Agents' general-purpose subagent."""
    return f"Ask the general-purpose agent to {request[0].lower()}{request[1:]}"


def archive_orders(before_year: int, into: str, *, delete_rows: bool = True, then_delete: str = "") -> str:
    """An archive request: read, write the CSV, optionally delete the rows and another file."""
    text = f"Archive orders older than {before_year} into {into}"
    if delete_rows and then_delete:
        return f"{text}, delete them from the table and delete the file {then_delete}"
    if delete_rows:
        return f"{text} and delete them from the table"
    return f"{text} and delete the file {then_delete}" if then_delete else text
