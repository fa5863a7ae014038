"""The reusable human-in-the-loop layer: settings, models, policies and decision contracts.

Agents, tools and the server import from here; nothing here knows about a particular
business domain except through the policies an agent hands it.
"""
