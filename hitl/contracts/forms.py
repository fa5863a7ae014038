"""Custom forms a tool raises itself, registered by name so the layer can check their answers.

A tool asks the thread's owner to fill in a form: `FORM.ask(runtime, title=..., context=...)`
where `FORM = register_form("<name>", Answer)` (at import, where the tool is defined), and gets
the answer as an `Answer`. The interrupt's value is a `FormRequest`
(`{"type": "form", "form": "<name>", "title": ..., "context": {...}, "agent": ..., "tool_call_id": ...}`).
Registering lets the server check an answer before it is saved, whatever the engine reports, and
`python -m hitl.contracts.publish` publish the form's value and answer types for clients. The
layer knows no form by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import Mapping

    from langchain.tools import ToolRuntime

AnswerT = TypeVar("AnswerT")
_FORMS: dict[str, Form[Any]] = {}


@dataclass(frozen=True)
class Form(Generic[AnswerT]):
    """A form: its name (the value's `form`), its answer model, and the type of its value, if given."""

    name: str
    answer: type[AnswerT]
    request: type | None = None

    def ask(self, runtime: ToolRuntime, *, title: str, context: Mapping[str, Any] | None = None) -> AnswerT:
        """Ask the thread's owner to fill in this form, from inside a tool; their answer, as `answer`.

        Declare `runtime: ToolRuntime` among the tool's parameters (LangChain fills it in): the
        value names the agent or subagent asking and this tool call. The run pauses here; once the
        owner answers (checked against `answer` before it is saved, by the server and the graph),
        the tool runs again from its top and this call returns the answer. `title` is the form's
        heading; `context` what the person reads before answering (a client shows it as a table).
        Anything the tool did before `ask` runs again on resume, so write nothing before it.
        """
        from langgraph.types import interrupt  # noqa: PLC0415  (importing a contract loads no graph code)

        metadata = (runtime.config or {}).get("metadata") or {}
        value = {
            "type": "form",
            "form": self.name,
            "title": title,
            "context": dict(context or {}),
            "agent": str(metadata.get("lc_agent_name") or "agent"),
            "tool_call_id": runtime.tool_call_id or "",
        }
        answer = interrupt(value, response_schema=self.answer)
        if isinstance(answer, self.answer):
            return answer
        validate = getattr(self.answer, "model_validate", None)
        return validate(answer) if validate is not None else answer  # type: ignore[no-any-return]


def register_form(name: str, answer: type[AnswerT], request: type | None = None) -> Form[AnswerT]:
    """Make the form `name` known: its answers are checked against `answer` (a pydantic model).

    Registering the same form again is a no-op, so a module may be imported twice.

    Raises:
        ValueError: another answer model is already registered under `name`.
    """
    known = _FORMS.get(name)
    if known is not None and (known.answer is not answer or known.request is not request):
        msg = f"form {name!r} is registered already, with {known.answer.__name__}"
        raise ValueError(msg)
    form = Form(name, answer, request)
    _FORMS[name] = form
    return form


def answer_of(name: Any) -> type | None:  # noqa: ANN401  (a value's `form`, as sent)
    """The answer model of the form `name`; None for a form nobody registered."""
    form = _FORMS.get(name) if isinstance(name, str) else None
    return form.answer if form else None


def registered() -> tuple[Form[Any], ...]:
    """Every form registered so far, by name."""
    return tuple(_FORMS[name] for name in sorted(_FORMS))
