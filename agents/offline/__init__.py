"""The demo agents' offline scripts: what the scripted model does for the shop, travel and ops agents.

Each agent hands its script to `create_deep_agent(offline=...)`; `phrases` holds the requests
they answer, written once for the demo, the README and the tests. The scripts are functions
of the conversation (`hitl.model.scripted.script.ScriptFn`): their steps depend on what the tools
returned. A new agent usually needs only rules (`hitl.model.scripted.Rule`).
"""

from agents.offline import phrases
from agents.offline.billing import BILLING_RULES
from agents.offline.ops import ops_script
from agents.offline.support import support_script
from agents.offline.travel import travel_script
from hitl.model.scripted import Script

SUPPORT = Script(
    support_script,
    *BILLING_RULES,
    examples=(phrases.REFUND_IN_FULL, phrases.REFUND_PARTIAL, phrases.EMAIL_CUSTOMER),
)
TRAVEL = Script(travel_script, examples=(phrases.FIND_FLIGHT, phrases.FIND_AND_BOOK_CHEAPEST))
OPS = Script(
    ops_script, examples=(phrases.ARCHIVE_OLD_ORDERS, phrases.DELETE_OLD_LOG, phrases.DEPLOY_TO_PRODUCTION)
)
DEMO = (SUPPORT, TRAVEL, OPS)
"""The three scripts, in the order the demo's scripted model once tried them."""

__all__ = ["DEMO", "OPS", "SUPPORT", "TRAVEL", "phrases"]
