# The demo's billing MCP server (services/billing_mcp.py): `make dev` serves it beside the agents on MCP_PORT,
# and the support agent reaches it there (BILLING_MCP_URL) with the dev token (BILLING_MCP_AUTHORIZATION).
# Set either in the environment to point support elsewhere; a project without the demo has no such file.
MCP_PORT ?= 8790
export BILLING_MCP_URL ?= http://127.0.0.1:$(MCP_PORT)/mcp
export BILLING_MCP_AUTHORIZATION ?= Bearer dev-billing-token
DEV_PORTS += $(MCP_PORT):MCP_PORT
DEV_BESIDE += $(BIN)/python -m services.billing_mcp --port $(MCP_PORT) &
