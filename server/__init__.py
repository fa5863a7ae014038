"""What the LangGraph server mounts besides the graphs: its durable dev checkpointer and start-up recovery.

Custom auth and HTTP routes live here too; the graphs themselves live in `agents/`.
"""
