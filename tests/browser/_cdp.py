"""A headless Debian `chromium` driven over the Chrome DevTools protocol, for the browser tests.

No browser download and no driver: the system's `chromium` starts with a fresh profile and
`--remote-debugging-port=0`, prints its DevTools address, and one page is driven over a
websocket. Waits happen in the page (a promise that resolves when a condition holds), each
under a deadline here. Tests skip with the reason when chromium is not installed.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import Process
from websockets.asyncio.client import ClientConnection, connect

START_DEADLINE = 30.0
STEP_DEADLINE = 30.0
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--window-size=1400,1000",
)
LISTENING = "DevTools listening on "


class BrowserError(AssertionError):
    """A script threw in the page, or the protocol answered an error."""


class Page:
    """One browser tab: evaluate scripts in it, wait for conditions, take screenshots."""

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        message_id = next(self._ids)
        await self._socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        with anyio.fail_after(STEP_DEADLINE):
            while True:
                message = json.loads(await self._socket.recv())
                if message.get("id") == message_id:
                    break
                if "method" in message:
                    self.events.append(message)
        if "error" in message:
            raise BrowserError(f"{method}: {message['error']}")
        result: dict[str, Any] = message["result"]
        return result

    async def wait_event(self, method: str, deadline: float = STEP_DEADLINE) -> dict[str, Any]:
        with anyio.fail_after(deadline):
            while True:
                for index, event in enumerate(self.events):
                    if event["method"] == method:
                        return self.events.pop(index)
                message = json.loads(await self._socket.recv())
                if "method" in message:
                    self.events.append(message)

    async def goto(self, url: str) -> None:
        self.events.clear()
        await self.send("Page.navigate", url=url)
        await self.wait_event("Page.loadEventFired")

    async def evaluate(self, expression: str) -> Any:
        answer = await self.send(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            thrown = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"the page threw: {thrown}")
        return answer["result"].get("value")

    async def wait_for(self, condition: str, deadline: float = STEP_DEADLINE) -> Any:
        """The first truthy value of the JavaScript `condition`, checked by the page itself."""
        script = f"""new Promise((resolve) => {{
            const check = () => {{
                let value;
                try {{ value = ({condition}); }} catch (error) {{ value = undefined; }}
                if (value) resolve(value); else setTimeout(check, 50);
            }};
            check();
        }})"""
        with anyio.fail_after(deadline):
            return await self.evaluate(script)

    async def screenshot(self, path: Path, *, whole_page: bool = False) -> Path:
        """A PNG of the window, or of the whole page however long it is."""
        shot = await self.send(
            "Page.captureScreenshot", format="png", captureBeyondViewport=whole_page
        )
        image = base64.b64decode(shot["data"])
        await anyio.Path(path.parent).mkdir(parents=True, exist_ok=True)
        await anyio.Path(path).write_bytes(image)
        return path


def chromium_path() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.skip(
            "chromium is not installed; `apt-get install -y chromium` (scripts/bootstrap does "
            "it as root) to run the browser tests"
        )
    return found


@asynccontextmanager
async def open_page(profile: Path) -> AsyncIterator[Page]:
    """A fresh headless chromium with one page, closed when the block exits."""
    argv = [chromium_path(), *FLAGS, f"--user-data-dir={profile}", "about:blank"]
    process = await anyio.open_process(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        async with anyio.create_task_group() as tg:
            with anyio.fail_after(START_DEADLINE):
                browser_url = await _devtools_url(process)
            tg.start_soon(_drain, process)
            async with connect(await _page_url(browser_url), max_size=None) as socket:
                page = Page(socket)
                await page.send("Page.enable")
                yield page
            tg.cancel_scope.cancel()
    finally:
        with anyio.move_on_after(5, shield=True):
            process.terminate()
            await process.wait()
        if process.returncode is None:
            process.kill()


async def _devtools_url(process: Process) -> str:
    assert process.stderr is not None
    seen = b""
    async for chunk in process.stderr:
        seen += chunk
        for line in seen.decode(errors="replace").split("\n")[:-1]:  # whole lines only
            if line.startswith(LISTENING):
                return line.removeprefix(LISTENING).strip()
    raise BrowserError(f"chromium exited before listening: {seen.decode(errors='replace')}")


async def _drain(process: Process) -> None:
    """Read chromium's log so a full pipe never stalls it."""
    assert process.stderr is not None
    async for _ in process.stderr:
        pass


async def _page_url(browser_url: str) -> str:
    """The DevTools websocket of the browser's first page."""
    port = browser_url.split("://", 1)[1].split("/", 1)[0]
    async with httpx2.AsyncClient(base_url=f"http://{port}", timeout=STEP_DEADLINE) as http:
        targets = (await http.get("/json/list")).json()
    pages = [t for t in targets if t.get("type") == "page"]
    return str(pages[0]["webSocketDebuggerUrl"])
