"""The chat model: a real one by name (`factory`), or the offline scripted one (`scripted`).

The scripted model answers with the agents' offline scripts (`Script`, `Rule`, `Call`), and is
served over OpenAI's protocol too, for the real-model path. `malformed_calls` asks the model
again when a reply's tool calls are garbled. Knows no agent by name.
"""
