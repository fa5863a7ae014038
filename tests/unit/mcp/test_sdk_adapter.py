"""The `mcp` SDK names the layer uses (in `hitl.mcp.connection`): fails clearly when an upgrade moves them."""

from __future__ import annotations

import inspect

from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult, InputRequiredResult

from hitl.mcp import connection


def test_the_client_takes_our_http_client_and_drives_rounds_by_hand():
    """streamable_http_client(http_client=), Client(read_timeout_seconds, cache), call_tool's round knobs."""
    assert "http_client" in inspect.signature(streamable_http_client).parameters
    client = inspect.signature(Client).parameters
    assert {"read_timeout_seconds", "cache"} <= set(client)
    call = inspect.signature(ClientSession.call_tool).parameters
    assert {
        "input_responses",
        "request_state",
        "meta",
        "allow_input_required",
        "read_timeout_seconds",
    } <= set(call)
    assert "cache_mode" in inspect.signature(Client.list_tools).parameters


def test_the_multi_round_trip_shapes_are_there():
    """InputRequiredResult (input_requests, request_state), both elicitation modes, ElicitResult's actions."""
    assert {"input_requests", "request_state"} <= set(InputRequiredResult.model_fields)
    assert {"message", "requested_schema"} <= set(ElicitRequestFormParams.model_fields)
    assert {"message", "url"} <= set(ElicitRequestURLParams.model_fields)
    assert ElicitResult(action="decline").action == "decline"
    assert connection.ElicitResult is ElicitResult
