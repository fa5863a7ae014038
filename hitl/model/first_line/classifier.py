"""The first-line reviewer's classifier as its policy names it: scripted, or a model with structured output.

`build` turns a `FirstLineReviewer` into a `Classifier`: `scripted` follows the policy's offline
`Triage` (deterministic, no network); `provider:model` asks that chat model through LangChain's
structured output (`FirstLineVerdict` as a tool), with the reviewer's timeout and no retries.
Every way it can fail is a `ClassifierFailure` naming its cause, which the server turns into
"a person decides". Not for which calls reach it (`hitl.policy.first_line`) or what it decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import ValidationError

from hitl.model.first_line.triage import UNCOVERED
from hitl.model.first_line.verdict import FirstLineVerdict, ReviewedCall, review_messages

if TYPE_CHECKING:
    from hitl.policy.first_line import FirstLineReviewer
    from hitl.settings import Settings

Cause = Literal["timeout", "error", "unparseable", "unbuildable"]
"""Why a classification gave no answer: too slow, the provider failed, an answer that does not
parse, or a model that cannot be built."""


class ClassifierFailure(Exception):  # noqa: N818  (a failure with a cause, handled as "a person decides")
    """No answer from the classifier; `cause` says why, the message in words."""

    def __init__(self, cause: Cause, message: str) -> None:
        """Fail with `cause` and a message for the card and the trail."""
        super().__init__(message)
        self.cause = cause
        self.message = message


class Classifier(Protocol):
    """What the server asks about one call."""

    @property
    def model_id(self) -> str:
        """What receipts name as the model: `scripted:<reviewer>` or the `provider:model` spec."""
        ...

    def classify(self, call: ReviewedCall) -> FirstLineVerdict:
        """The verdict on `call`, or `ClassifierFailure`."""
        ...


@dataclass(frozen=True)
class ScriptedClassifier:
    """The offline classifier: the policy's `Triage` rules, a pure function of the call."""

    reviewer: FirstLineReviewer

    @property
    def model_id(self) -> str:
        """`scripted:<reviewer name>`."""
        return f"scripted:{self.reviewer.name}"

    def classify(self, call: ReviewedCall) -> FirstLineVerdict:
        """The first rule's answer; without rules (or none covering it), refer."""
        if self.reviewer.offline is None:
            return FirstLineVerdict(decision="refer", reason=UNCOVERED)
        return self.reviewer.offline.verdict(call.tool, call.args)


@dataclass(frozen=True)
class ChatClassifier:
    """A chat model asked through structured output (`FirstLineVerdict` as its only tool)."""

    model_id: str
    instructions: str
    runnable: Any

    def classify(self, call: ReviewedCall) -> FirstLineVerdict:
        """The model's verdict; a timeout, a provider error or an answer that does not parse fail."""
        try:
            result = self.runnable.invoke(review_messages(self.instructions, call))
        except Exception as error:
            kind = type(error).__name__
            if "timeout" in kind.lower():
                raise ClassifierFailure(
                    "timeout", f"{self.model_id} did not answer in time ({kind})"
                ) from error
            raise ClassifierFailure("error", f"{self.model_id} failed: {kind}: {error}") from error
        parsed = result.get("parsed") if isinstance(result, dict) else None
        if isinstance(parsed, FirstLineVerdict):
            return parsed
        problem = result.get("parsing_error") if isinstance(result, dict) else None
        try:  # a parser that gave back a dict rather than the model
            return FirstLineVerdict.model_validate(parsed)
        except ValidationError:
            pass
        raise ClassifierFailure(
            "unparseable",
            f"{self.model_id} answered without a readable verdict ({problem or 'no tool call'})",
        )


def build(reviewer: FirstLineReviewer, settings: Settings) -> Classifier:
    """The classifier `reviewer.model` names.

    Raises:
        ClassifierFailure: `unbuildable` for a provider LangChain does not know or whose package is missing.
    """
    if reviewer.model == "scripted":
        return ScriptedClassifier(reviewer)
    return _chat(
        reviewer.model,
        reviewer.instructions,
        reviewer.timeout_seconds,
        settings.openai_api_key,
        settings.openai_base_url,
    )


@lru_cache(maxsize=32)
def _chat(spec: str, instructions: str, timeout: float, api_key: str, base_url: str) -> ChatClassifier:
    """One structured-output model per spec and connection (building a client costs milliseconds)."""
    from langchain.chat_models import init_chat_model  # noqa: PLC0415  (only with a real model)

    provider, _, model = spec.partition(":")
    options: dict[str, Any] = {"max_retries": 0, "timeout": timeout}
    if provider == "openai":
        options |= {"api_key": api_key or "not-needed", "base_url": base_url or None}
    try:
        chat = init_chat_model(model, model_provider=provider, **options)
        runnable = chat.with_structured_output(FirstLineVerdict, method="function_calling", include_raw=True)
    except Exception as error:  # noqa: BLE001  (any failure to build: a person decides)
        raise ClassifierFailure(
            "unbuildable", f"{spec} cannot be built: {type(error).__name__}: {error}"
        ) from None
    return ChatClassifier(model_id=spec, instructions=instructions, runnable=runnable)
