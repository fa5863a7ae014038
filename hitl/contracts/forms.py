"""Custom forms a tool raises with `interrupt()`, registered by name so the layer can check their answers.

A tool asks a person to fill in a form: `interrupt(value, response_schema=Answer)`, its value
`{"type": "form", "form": "<name>", "title": ..., "context": {...}}`
(`hitl.contracts.interrupts.FormRequest`).
Registering the form (`register_form`, where the tool is defined) lets the server check an answer
before it is saved, whatever the engine reports, and `python -m hitl.contracts.publish` publish the
form's value and answer types for clients. The layer knows no form by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_FORMS: dict[str, Form] = {}


@dataclass(frozen=True)
class Form:
    """A form: its name (the value's `form`), its answer model, and the type of its value, if given."""

    name: str
    answer: type
    request: type | None = None


def register_form(name: str, answer: type, request: type | None = None) -> Form:
    """Make the form `name` known: its answers are checked against `answer` (a pydantic model).

    Registering the same form again is a no-op, so a module may be imported twice.

    Raises:
        ValueError: another answer model is already registered under `name`.
    """
    known = _FORMS.get(name)
    if known is not None and (known.answer is not answer or known.request is not request):
        msg = f"form {name!r} is registered already, with {known.answer.__name__}"
        raise ValueError(msg)
    _FORMS[name] = Form(name, answer, request)
    return _FORMS[name]


def answer_of(name: Any) -> type | None:  # noqa: ANN401  (a value's `form`, as sent)
    """The answer model of the form `name`; None for a form nobody registered."""
    form = _FORMS.get(name) if isinstance(name, str) else None
    return form.answer if form else None


def registered() -> tuple[Form, ...]:
    """Every form registered so far, by name."""
    return tuple(_FORMS[name] for name in sorted(_FORMS))
