"""The offline scripted chat model, and how an agent tells it what to do: `Script`, `Rule`, `Call`.

Deterministic and network-free, so every agent runs in tests and demos without a key (README,
"Your own agent in five minutes"). `endpoint` serves the same decisions over OpenAI's
chat-completions protocol, for the real-model path.
"""

from hitl.model.scripted.rules import Rule, Script
from hitl.model.scripted.script import Call

__all__ = ["Call", "Rule", "Script"]
