"""The chat model factory: scripted offline by default, any OpenAI-compatible server on request."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hitl.scripted.model import ScriptedChatModel

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from hitl.settings import Settings


def make_model(settings: Settings) -> BaseChatModel:
    """The chat model `settings.model` names.

    Raises:
        ValueError: for a model name that is neither 'scripted' nor 'openai:<model>'.
    """
    name = settings.resolved_model
    if name == "scripted":
        return ScriptedChatModel()
    provider, _, model = name.partition(":")
    if provider != "openai" or not model:
        msg = f"MODEL must be 'scripted' or 'openai:<model>' (got {name!r})."
        raise ValueError(msg)
    from langchain_openai import ChatOpenAI  # noqa: PLC0415  (only needed with a real model)

    return ChatOpenAI(
        model=model,
        api_key=settings.openai_api_key or "not-needed",  # type: ignore[arg-type]
        base_url=settings.openai_base_url or None,
    )
