"""The demo agents' offline scripts: what the scripted model does for the shop, travel and ops agents.

Each agent hands its script to `create_deep_agent(offline=...)`; `phrases` holds the requests
they answer, written once for the demo, the README and the tests; `triage` is the support
agent's first-line reviewer's offline rules. The scripts are functions
of the conversation (`hitl.model.scripted.script.ScriptFn`): their steps depend on what the tools
returned. A new agent usually needs only rules (`hitl.model.scripted.Rule`).
"""

from agents.offline import phrases
from agents.offline.billing import BILLING_RULES
from agents.offline.ops import ops_script
from agents.offline.support import support_script
from agents.offline.travel import travel_script
from agents.offline.triage import SUPPORT_TRIAGE
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
FIRST_LINE_REVIEWER = "support-triage"
"""The name the support agent's first-line reviewer signs as (`model:support-triage`)."""
DEMO = (SUPPORT, TRAVEL, OPS, SUPPORT_TRIAGE.script(FIRST_LINE_REVIEWER))
"""The three scripts, in the order the demo's scripted model once tried them, and the first-line
reviewer's rules (what the scripted endpoint answers a review request with)."""

__all__ = ["DEMO", "FIRST_LINE_REVIEWER", "OPS", "SUPPORT", "SUPPORT_TRIAGE", "TRAVEL", "phrases"]
