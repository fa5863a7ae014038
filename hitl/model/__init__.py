"""The chat model: a real one by name (`factory`), or the offline scripted one (`scripted`).

The scripted model answers with the agents' offline scripts (`Script`, `Rule`, `Call`), and is
served over OpenAI's protocol too, for the real-model path. Knows no agent by name.
"""
