"""MODEL: 'scripted' or init_chat_model's 'provider:model', with retries and timeout from the settings."""

from __future__ import annotations

import pytest
from langchain_openai import ChatOpenAI

from hitl.model.factory import make_model
from hitl.model.scripted.chat import ScriptedChatModel
from hitl.settings import Settings


def test_scripted_is_the_offline_default():
    """no MODEL and no key: the scripted model."""
    assert isinstance(make_model(Settings(model="", openai_api_key="")), ScriptedChatModel)


def test_openai_gets_the_base_url_retries_and_timeout():
    """openai:<model>: ChatOpenAI at OPENAI_BASE_URL with MODEL_MAX_RETRIES and MODEL_TIMEOUT_SECONDS."""
    settings = Settings(
        model="openai:scripted",
        openai_base_url="http://127.0.0.1:8788/v1",
        model_max_retries=5,
        model_timeout_seconds=7.5,
    )
    model = make_model(settings)
    assert isinstance(model, ChatOpenAI)
    assert (model.model_name, model.openai_api_base) == ("scripted", "http://127.0.0.1:8788/v1")
    assert (model.max_retries, model.request_timeout) == (5, 7.5)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("gpt-4o", "provider:model"),
        (":gpt-4o", "provider:model"),
        ("openai:", "provider:model"),
        ("nosuch:x", "nosuch"),
    ],
)
def test_a_name_it_cannot_use_is_refused_saying_why(name, says):
    """a bad MODEL: ValueError naming the expected form or the unknown provider."""
    with pytest.raises(ValueError, match=says):
        make_model(Settings(model=name))
