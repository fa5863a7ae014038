"""The end-to-end server scenarios again, with the served agents' model behind `langchain-openai`.

The wire `server` (see conftest) runs `MODEL=openai:scripted` against the scripted endpoint:
refunds approved, edited and rejected, a streamed run, the flight-booking form from a subagent,
per-call ops interrupts answered at once and one at a time, sign-off requests.
"""

import pytest

from tests.server import test_ops_server, test_support_server, test_travel_server
from tests.wire.rerun import collect_again

pytestmark = pytest.mark.server

globals().update(collect_again(test_support_server, test_travel_server, test_ops_server))
