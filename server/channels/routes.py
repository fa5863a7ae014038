"""The channels' HTTP routes: Slack's interactivity endpoint (signed, no token) and its refusals' trail.

`POST /channels/slack/actions` authenticates by Slack's signature, so it is let past the
server's token checks explicitly: `SignedRoute` here (langgraph_api's auth middleware) and
`SIGNED_ROUTES` in `server.http.app` (`TokenRequired`). Every other method on that path, and every
other route, stays authenticated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import BaseRoute, Match, Route

from server.channels.slack import channel_trail, slack_actions
from server.http.routes import PublicRoute

if TYPE_CHECKING:
    from starlette.types import Scope

SLACK_ACTIONS = "/channels/slack/actions"


class SignedRoute(PublicRoute):
    """A POST route that checks its own signature instead of a token (see `PublicRoute`)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        """The inner route's match, for POST only."""
        if scope["type"] != "http" or scope.get("method") != "POST":
            return Match.NONE, {}
        return self.route.matches(scope)


ROUTES: list[BaseRoute] = [
    SignedRoute(Route(SLACK_ACTIONS, slack_actions, methods=["POST"])),
    Route("/channels/slack/audit", channel_trail, methods=["GET"]),
]
