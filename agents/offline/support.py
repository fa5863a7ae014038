"""The scripted customer-service behaviour: refunds, e-mails, asking for a missing order id."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hitl.model.scripted.script import Call, Reply

if TYPE_CHECKING:
    from hitl.model.scripted.conversation import Conversation, ToolResult

ORDER_ID = re.compile(r"\b([A-Z]\d{4,9})\b")
AMOUNT = re.compile(r"\brefund\s+(?:of\s+)?[$€£]?(\d+(?:\.\d+)?)\b", re.IGNORECASE)
FULL = re.compile(r"\b(in full|full refund|fully|whole amount|everything)\b", re.IGNORECASE)
SPECIALIST = re.compile(r"^.*?\brefund specialist\b\s*(?:to\s+)?", re.IGNORECASE)
EMAIL = re.compile(
    r"\b(e-?mail|write to|tell)\b.*?\bcustomer\b(?:.*?\bthat\b\s*(?P<news>.+))?", re.IGNORECASE
)
QUESTION = re.compile(r"\s*\band ask me\s+(?P<question>\S.*?)[\s.?!]*$", re.IGNORECASE)
"""'... and ask me whether ...': a question for the person, asked in the same turn as the rest."""


@dataclass(frozen=True)
class SupportRequest:
    """What a support request asks for, read from its words."""

    order_id: str | None
    refund: bool
    amount: float | None
    email_news: str | None
    question: str | None = None

    @classmethod
    def read(cls, text: str) -> SupportRequest:
        """Parse a request such as 'Refund 59 on order A2048'."""
        asked = QUESTION.search(text)
        question = f"Please tell me {_to_you(asked['question'])}." if asked else None
        text = text[: asked.start()] if asked else text
        order = ORDER_ID.search(text)
        amount = AMOUNT.search(text)
        email = EMAIL.search(text)
        refund = bool(re.search(r"\brefund", text, re.IGNORECASE)) and not (
            email
            and not re.search(
                r"\brefund\b.*(?:\b(?:order|it|in full|fully)\b|\d)", text[: email.start()], re.IGNORECASE
            )
        )
        news = (email.group("news") or "we are looking into your order").rstrip(" .") if email else None
        return cls(
            order_id=order.group(1) if order else None,
            refund=refund,
            amount=float(amount.group(1)) if amount and not FULL.search(text) else None,
            email_news=news,
            question=question,
        )


def support_script(chat: Conversation) -> Reply | None:
    """Answer a support request, one step per model call."""
    if "issue_refund" not in chat.tools and "send_email" not in chat.tools:
        return None
    if "task" in chat.tools and (match := SPECIALIST.match(chat.request)):
        return _delegate(chat, chat.request[match.end() :])
    request = SupportRequest.read(chat.request)
    if not request.refund and request.email_news is None:
        return None
    order_id = request.order_id or _answered_order_id(chat)
    if order_id is None:
        if chat.last("ask_user") is not None:
            return "I still need the order id (it looks like A1024) before I can help."
        return [Call("ask_user", {"question": "Which order is this about? Please give the order id."})]
    return _refund_then_email(chat, request, order_id)


def _to_you(words: str) -> str:
    """The person's own words about themselves, said back to them: 'whether I ...' -> 'whether you ...'."""
    swapped = {"i": "you", "me": "you", "my": "your", "mine": "yours", "am": "are"}
    return re.sub(r"\b(I|me|my|mine|am)\b", lambda m: swapped[m.group(1).lower()], words)


def _delegate(chat: Conversation, task: str) -> Reply:
    done = chat.last("task")
    if done is None:
        return [Call("task", {"description": task.strip(), "subagent_type": "refund_specialist"})]
    return f"The refund specialist reports: {done.content}"


def _answered_order_id(chat: Conversation) -> str | None:
    answer = chat.last("ask_user")
    match = ORDER_ID.search(answer.content) if answer else None
    return match.group(1) if match else None


def _refund_then_email(chat: Conversation, request: SupportRequest, order_id: str) -> Reply:
    order = chat.last("get_order")
    needs_order = (request.refund and request.amount is None) or request.email_news is not None
    if needs_order and order is None:
        return [Call("get_order", {"order_id": order_id})]
    if order is not None and not order.ok:
        return f"I could not look up order {order_id}: {order.content}"
    details = order.data if order else None
    pending: list[Call] = []
    if request.refund and chat.last("issue_refund") is None:
        amount = request.amount if request.amount is not None else float((details or {})["amount"])
        reason = (
            "Item arrived broken"
            if re.search(r"broken|damaged", chat.request, re.IGNORECASE)
            else "Customer request"
        )
        pending.append(Call("issue_refund", {"order_id": order_id, "amount": amount, "reason": reason}))
    if request.question is not None and chat.last("ask_user") is None:
        pending.append(Call("ask_user", {"question": request.question}))
    if request.email_news is not None and chat.last("send_email") is None and details:
        pending.append(
            Call(
                "send_email",
                {
                    "to": details["customer_email"],
                    "subject": f"About your order {order_id}",
                    "body": f"Hello {details['customer_name']}, {request.email_news}.",
                },
            )
        )
    if pending:
        return pending
    done = (chat.last("issue_refund"), chat.last("send_email"), chat.last("ask_user"))
    return " ".join(_outcome(r, order_id) for r in done if r)


def _outcome(result: ToolResult, order_id: str) -> str:
    if result.name == "ask_user":
        return f"You answered: {result.content}"
    if result.name == "issue_refund":
        if not result.ok:
            return f"I did not refund order {order_id}. {result.content}"
        data = result.data
        if data is None:
            return f"On order {order_id} the reviewer answered: {result.content}"
        return f"Refunded {data['refunded']:g} on order {order_id} (refund {data['refund_id']})."
    if not result.ok:
        return f"I did not send the e-mail. {result.content}"
    return f"E-mailed {(result.data or {}).get('to', 'the customer')} about order {order_id}."
