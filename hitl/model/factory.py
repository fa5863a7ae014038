"""The chat model factory: scripted offline by default, any LangChain provider on request.

`MODEL` is `scripted` or a `provider:model` string as LangChain's `init_chat_model` reads it;
OpenAI (and any OpenAI-compatible server through `OPENAI_BASE_URL`) is the tested path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hitl.model.scripted.chat import ScriptedChatModel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langchain_core.language_models import BaseChatModel

    from hitl.model.scripted.script import ScriptFn
    from hitl.settings import Settings


def make_model(settings: Settings, scripts: Sequence[ScriptFn] | None = None) -> BaseChatModel:
    """The chat model `settings.model` names, with its retries and timeout.

    `scripts` are what the scripted model answers with (an agent's offline script); None: every
    script the agents built in this process declared.

    Raises:
        ValueError: for a name that is neither 'scripted' nor 'provider:model', or a provider
            whose LangChain package is not installed.
    """
    name = settings.resolved_model
    if name == "scripted":
        return ScriptedChatModel(scripts=None if scripts is None else tuple(scripts))
    provider, _, model = name.partition(":")
    if not provider or not model:
        msg = f"MODEL must be 'scripted' or 'provider:model', e.g. 'openai:gpt-4o-mini' (got {name!r})."
        raise ValueError(msg)
    from langchain.chat_models import init_chat_model  # noqa: PLC0415  (only needed with a real model)

    options: dict[str, Any] = {
        "max_retries": settings.model_max_retries,
        "timeout": settings.model_timeout_seconds,
    }
    if provider == "openai":
        options |= {
            "api_key": settings.openai_api_key or "not-needed",
            "base_url": settings.openai_base_url or None,
        }
    try:
        return init_chat_model(model, model_provider=provider, **options)
    except ImportError as error:
        msg = f"MODEL={name!r} needs the LangChain package of {provider!r}: {error}"
        raise ValueError(msg) from error
