"""LangChain tools, grouped by domain: validate, call a service, format the result.

Tools never decide whether they may run: the agent's policy in `hitl/` gates them.
"""
