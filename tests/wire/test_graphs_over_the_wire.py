"""The in-process agent scenarios again, with `langchain-openai` and the scripted endpoint as the model.

Every test of these modules runs here a second time: refunds approved, edited, rejected and
answered through ask_user; a batched turn of several calls; the flight-booking form from a
subagent; per-call ops interrupts; paths refused inside tools.
"""

from langchain_openai import ChatOpenAI

from agents.offline import phrases
from hitl.model.factory import make_model
from hitl.settings import Settings
from tests.graphs import test_bad_paths, test_ops, test_support, test_travel
from tests.wire.rerun import collect_again

globals().update(collect_again(test_support, test_travel, test_ops, test_bad_paths))


def test_the_agents_here_reach_their_model_over_http(support_agent, through_the_wire):
    """wire: the model is ChatOpenAI at the endpoint; a refund request reaches it as whole completions."""
    model = make_model(Settings())
    assert isinstance(model, ChatOpenAI)
    assert (model.model_name, model.openai_api_base) == ("scripted", through_the_wire.base_url)
    support_agent().say(phrases.REFUND_PARTIAL)
    served = through_the_wire.served()
    assert served["requests"] >= 1
    assert "streamed" not in served  # invoke: whole completions (the server's streamed runs stream)
