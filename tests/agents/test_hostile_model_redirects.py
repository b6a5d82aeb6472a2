"""A model endpoint that answers with a redirect: corral follows none, so neither the
conversation (a 307 or 308 resends the body) nor the key (same origin, another path) goes
where the endpoint points; the refusal says what to set instead."""

from __future__ import annotations

import anyio
import pytest
from anyio.abc import SocketStream

from corral.agents.model import ModelRequestRejected
from tests.agents._raw_endpoint import complete_through, head, raw_endpoint

pytestmark = pytest.mark.hostile

TEST_DEADLINE = 20

REDIRECTS = ["301 Moved Permanently", "302 Found", "303 See Other", "307 Temporary Redirect"]
REDIRECTS += ["308 Permanent Redirect"]


@pytest.mark.anyio
@pytest.mark.parametrize("status", REDIRECTS)
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("same_origin", [True, False])
async def test_a_redirect_is_refused_and_nothing_is_sent_where_it_points(
    status: str, stream: bool, same_origin: bool
) -> None:
    async def nothing(stream: SocketStream) -> None:
        await stream.send(head("500 Internal Server Error", "Content-Length: 0"))

    with anyio.fail_after(TEST_DEADLINE):
        async with raw_endpoint(nothing) as elsewhere:
            target = elsewhere.base_url + "/responses"

            async def redirect(stream: SocketStream) -> None:
                location = "/v1/elsewhere" if same_origin else target
                await stream.send(head(status, f"Location: {location}", "Content-Length: 0"))

            async with raw_endpoint(redirect) as endpoint:
                with pytest.raises(ModelRequestRejected, match=r"redirects to .*base URL"):
                    await complete_through(endpoint.base_url, stream=stream)
    assert len(endpoint.requests) == 1  # the redirect's target was never asked, here or there
    assert elsewhere.requests == []
