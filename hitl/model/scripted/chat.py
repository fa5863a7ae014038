"""`ScriptedChatModel`: an offline chat model whose reply is a pure function of the conversation.

It answers with the scripts it is given (an agent's `offline=` script, `hitl.model.scripted.rules`),
or with every script the agents built in this process declared (`scripts_in_use`). It streams
text and tool calls the way a provider does, so the server's message streaming works. Tool
call ids are derived from the thread and the conversation, never from a counter.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCall
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.config import get_config

from hitl.model.scripted.conversation import Conversation

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool

    from hitl.model.scripted.script import Reply, ScriptFn

_DECLARED: list[ScriptFn] = []
"""The offline scripts of the agents built in this process, in the order they were declared."""


def declare(script: ScriptFn) -> None:
    """Add an agent's offline script to those this process knows (once)."""
    if not any(known is script for known in _DECLARED):
        _DECLARED.append(script)


def scripts_in_use() -> tuple[ScriptFn, ...]:
    """Every script declared so far (what the scripted OpenAI endpoint answers with)."""
    return tuple(_DECLARED)


def scripted_reply(chat: Conversation, scripts: Sequence[ScriptFn] | None = None) -> Reply:
    """The first script's answer to `chat`, or a short help text naming requests they answer."""
    chosen = scripts_in_use() if scripts is None else scripts
    for script in chosen:
        if (reply := script(chat)) is not None:
            return reply
    return help_text(chosen)


def help_text(scripts: Sequence[ScriptFn]) -> str:
    """What the model says to a request no script answers: some requests that work."""
    examples = [e for script in scripts for e in getattr(script, "examples", ())][:3]
    if not examples:
        return (
            "I am the offline scripted model, and this agent has no offline script. Give it one: "
            "create_deep_agent(offline=Script(Rule(...))) (README, 'Your own agent in five minutes'), "
            "or set MODEL to a real model."
        )
    return "I am the offline scripted model. Try: " + ", ".join(f"'{e}'" for e in examples) + "."


class ScriptedChatModel(BaseChatModel):
    """Deterministic offline chat model driven by scripts (`hitl.model.scripted.rules`, or functions)."""

    scripts: tuple[Any, ...] | None = None
    """The scripts it answers with, first match wins; None: every declared script (`scripts_in_use`)."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,  # noqa: ANN401
    ) -> Runnable[Any, AIMessage]:
        """Remember which tools are offered, and their argument schemas; scripts only call those."""
        functions = [convert_to_openai_tool(t)["function"] for t in tools]
        schemas = {f["name"]: f.get("parameters") or {} for f in functions}
        return self.bind(tool_names=list(schemas), tool_schemas=schemas, **kwargs)

    def _reply(
        self,
        messages: list[BaseMessage],
        tool_names: Sequence[str],
        tool_schemas: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> AIMessage:
        chat = Conversation.of(messages, frozenset(tool_names), tool_schemas)
        reply = scripted_reply(chat, self.scripts)
        if isinstance(reply, str):
            return AIMessage(content=reply)
        seed = _seed(messages)
        calls = [
            ToolCall(name=c.name, args=c.args, id=_call_id(seed, i), type="tool_call")
            for i, c in enumerate(reply)
        ]
        return AIMessage(content="", tool_calls=calls)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,  # noqa: ARG002
        run_manager: CallbackManagerForLLMRun | None = None,  # noqa: ARG002
        tool_names: Sequence[str] = (),
        tool_schemas: Mapping[str, Mapping[str, Any]] | None = None,
        **kwargs: Any,  # noqa: ANN401, ARG002
    ) -> ChatResult:
        """One reply for the conversation."""
        message = self._reply(messages, tool_names, tool_schemas)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,  # noqa: ARG002
        run_manager: CallbackManagerForLLMRun | None = None,
        tool_names: Sequence[str] = (),
        tool_schemas: Mapping[str, Mapping[str, Any]] | None = None,
        **kwargs: Any,  # noqa: ANN401, ARG002
    ) -> Iterator[ChatGenerationChunk]:
        """The same reply, streamed: text in words, then one chunk per tool call."""
        message = self._reply(messages, tool_names, tool_schemas)
        text = message.text
        for i, word in enumerate(text.split(" ") if text else []):
            token = word if i == 0 else f" {word}"
            if run_manager:
                run_manager.on_llm_new_token(token)
            yield ChatGenerationChunk(message=AIMessageChunk(content=token))
        for index, call in enumerate(message.tool_calls):
            chunk = tool_call_chunk(
                name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=index
            )
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[chunk]))
        yield ChatGenerationChunk(message=AIMessageChunk(content="", chunk_position="last"))


def _seed(messages: Sequence[BaseMessage]) -> str:
    """A digest of the thread and the conversation so far."""
    try:
        thread = str(get_config().get("configurable", {}).get("thread_id", ""))
    except RuntimeError:  # called outside a graph
        thread = ""
    digest = hashlib.sha256(thread.encode())
    for message in messages:
        digest.update(f"{message.type}:{message.content!s}".encode())
    return digest.hexdigest()


def _call_id(seed: str, index: int) -> str:
    return f"call_{hashlib.sha256(f'{seed}:{index}'.encode()).hexdigest()[:24]}"
