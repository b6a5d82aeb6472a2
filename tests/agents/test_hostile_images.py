"""A model that views image after image cannot grow its requests without end: the history keeps
the newest images only, and the older ones become a marked note the model can act on."""

from __future__ import annotations

import pytest

from corral.agents._core import AgentCore
from corral.agents._events import CallModel, ToolResult
from corral.agents._fragments import IMAGE_DROPPED
from corral.agents._images import MAX_CONTEXT_IMAGES
from corral.agents._items import FunctionCall, Message

from .test_core import answer, make_core, only, task

pytestmark = pytest.mark.hostile


def view(core: AgentCore, index: int, images: int) -> CallModel:
    call = FunctionCall(call_id=f"c{index}", name="view_image", arguments="{}")
    answer(core, call)
    urls = tuple(f"data:image/png;base64,{index}-{n}" for n in range(images))
    action = only(core.handle(ToolResult(call_id=call.call_id, output="shown", images=urls)))
    assert isinstance(action, CallModel)
    return action


@pytest.mark.parametrize("per_call", [1, 3, MAX_CONTEXT_IMAGES + 2])
def test_the_history_never_carries_more_than_the_newest_images(per_call: int) -> None:
    core = make_core()
    only(core.handle(task()))
    for index in range(30):
        request = view(core, index, per_call).request
        messages = [i for i in request.input if isinstance(i, Message)]
        shown = [url for m in messages for url in m.images]
        assert len(shown) <= max(MAX_CONTEXT_IMAGES, per_call)
        assert shown[-1] == f"data:image/png;base64,{index}-{per_call - 1}", "newest kept"
    notes = [m for m in messages if IMAGE_DROPPED.matches(m.text)]
    assert notes and "View it again if you still need it." in notes[0].text
