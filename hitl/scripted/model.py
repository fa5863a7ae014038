"""`ScriptedChatModel`: an offline chat model whose reply is a pure function of the conversation.

It streams text and tool calls the way a provider does, so the server's message streaming
works. Tool call ids are derived from the thread and the conversation, never from a counter.
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

from hitl.scripted.conversation import Conversation
from hitl.scripted.ops import ops_script
from hitl.scripted.support import support_script
from hitl.scripted.travel import travel_script

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool

    from hitl.scripted.script import Reply, Script

SCRIPTS: tuple[Script, ...] = (support_script, travel_script, ops_script)

HELP = (
    "I am the offline scripted model. Try: 'Order A1024 arrived broken, please refund it in full.', "
    "'Refund 59 on order A2048' or 'Email the customer of A1024 that the refund is on its way'."
)


def scripted_reply(chat: Conversation) -> Reply:
    """The first script's answer to `chat`, or a short help text."""
    for script in SCRIPTS:
        if (reply := script(chat)) is not None:
            return reply
    return HELP


class ScriptedChatModel(BaseChatModel):
    """Deterministic offline chat model driven by the scripts in `hitl.scripted`."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,  # noqa: ANN401
    ) -> Runnable[Any, AIMessage]:
        """Remember which tools are offered; scripts only call tools they are given."""
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return self.bind(tool_names=names, **kwargs)

    def _reply(self, messages: list[BaseMessage], tool_names: Sequence[str]) -> AIMessage:
        reply = scripted_reply(Conversation.of(messages, frozenset(tool_names)))
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
        **kwargs: Any,  # noqa: ANN401, ARG002
    ) -> ChatResult:
        """One reply for the conversation."""
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages, tool_names))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,  # noqa: ARG002
        run_manager: CallbackManagerForLLMRun | None = None,
        tool_names: Sequence[str] = (),
        **kwargs: Any,  # noqa: ANN401, ARG002
    ) -> Iterator[ChatGenerationChunk]:
        """The same reply, streamed: text in words, then one chunk per tool call."""
        message = self._reply(messages, tool_names)
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
