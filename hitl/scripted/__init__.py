"""The offline scripted chat model and the requests it understands.

Deterministic and network-free, so every agent runs in tests and demos without a key.
`endpoint` serves the same decisions over OpenAI's chat-completions protocol, for the real-model path.
"""
