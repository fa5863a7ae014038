"""The MCP servers the server tests run beside `langgraph dev`: the demo's billing and a misbehaving lab."""
