"""The private parts of LangChain's HITL middleware this package builds on, in one place.

`ApprovalGate` subclasses `HumanInTheLoopMiddleware` and reuses three of its private names:
the message a reject or respond becomes, the validator that checks an answer and passes it on
as sent, and the state that carries reviewer edits from `after_model` to the tool. A LangChain
upgrade may rename or change them; importing this module then fails with one message naming
what is missing, and `tests/unit/gate/test_langchain_hitl.py` checks that each still does what we
rely on. Nothing else in the package imports a private LangChain name.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import version

STOCK = "langchain.agents.middleware.human_in_the_loop"
USED = ("_answer_message", "_as_sent", "_HumanInTheLoopState")


def missing() -> list[str]:
    """The private names this package uses that the installed LangChain lacks."""
    module = import_module(STOCK)
    return [name for name in USED if not hasattr(module, name)]


try:
    from langchain.agents.middleware.human_in_the_loop import (
        _answer_message as answer_message,  # (tool_call, reject/respond) -> the model's ToolMessage
    )
    from langchain.agents.middleware.human_in_the_loop import (
        _as_sent as as_sent,  # pydantic wrap validator: check the answer, pass it on as sent
    )
    from langchain.agents.middleware.human_in_the_loop import (
        _HumanInTheLoopState as HumanInTheLoopState,  # keeps reviewer edits for the tool node
    )
except ImportError as error:  # pragma: no cover  (only after a LangChain upgrade)
    msg = (
        f"langchain {version('langchain')} changed its HITL middleware: {STOCK} has no "
        f"{', '.join(missing())}. Adapt hitl/gate/langchain_hitl.py "
        "(and see tests/unit/gate/test_langchain_hitl.py)."
    )
    raise ImportError(msg) from error

__all__ = ["HumanInTheLoopState", "answer_message", "as_sent", "missing"]
