"""Conversation items in Responses-API shape: the one vocabulary of history, models and journal.

Every item knows its canonical wire form (`to_wire`), which is exactly what the Responses API
takes as an `input` item; the Chat Completions adapter translates from it. Items are frozen
pydantic models so the journal can store and reload them losslessly.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Role = Literal["user", "assistant", "developer", "system"]


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Message(_Item):
    """A message: its text, and the images (data URLs) a user-side message shows after it."""

    type: Literal["message"] = "message"
    role: Role
    text: str
    images: tuple[str, ...] = ()

    def to_wire(self) -> dict[str, Any]:
        part = "output_text" if self.role == "assistant" else "input_text"
        content: list[dict[str, Any]] = [{"type": part, "text": self.text}]
        if self.images:
            content = content if self.text else []
            content += [{"type": "input_image", "image_url": url} for url in self.images]
        return {"type": "message", "role": self.role, "content": content}


class FunctionCall(_Item):
    """A tool call the model made; `arguments` is the raw JSON text it produced."""

    type: Literal["function_call"] = "function_call"
    call_id: str
    name: str
    arguments: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "function_call",
            "call_id": self.call_id,
            "name": self.name,
            "arguments": self.arguments,
        }


class FunctionCallOutput(_Item):
    """The answer to a `FunctionCall`, matched by `call_id`."""

    type: Literal["function_call_output"] = "function_call_output"
    call_id: str
    output: str
    success: bool = True

    def to_wire(self) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": self.call_id, "output": self.output}


class Reasoning(_Item):
    """A reasoning item: its summary text and, when the provider gives it, encrypted content."""

    type: Literal["reasoning"] = "reasoning"
    id: str = ""
    summary: str = ""
    encrypted_content: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": self.summary}] if self.summary else [],
        }
        if self.id:
            wire["id"] = self.id
        if self.encrypted_content is not None:
            wire["encrypted_content"] = self.encrypted_content
        return wire


Item = Annotated[
    Message | FunctionCall | FunctionCallOutput | Reasoning, Field(discriminator="type")
]
ITEM_ADAPTER: TypeAdapter[Item] = TypeAdapter(Item)


class Usage(_Item):
    """Token usage the provider reported for one response."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


def item_from_wire(wire: dict[str, Any]) -> Item:
    """Parse a Responses-API item dict (input or output form) into an `Item`."""
    kind = wire.get("type", "message")
    if kind == "message":
        content = wire.get("content", "")
        if isinstance(content, str):
            return Message(role=wire["role"], text=content)
        parts = [part for part in content if isinstance(part, dict)]
        text = "".join(str(part.get("text", "")) for part in parts)
        images = tuple(
            str(part["image_url"])
            for part in parts
            if part.get("type") == "input_image" and "image_url" in part
        )
        return Message(role=wire["role"], text=text, images=images)
    if kind == "function_call":
        return FunctionCall(call_id=wire["call_id"], name=wire["name"], arguments=wire["arguments"])
    if kind == "function_call_output":
        output = wire["output"]
        return FunctionCallOutput(
            call_id=wire["call_id"], output=output if isinstance(output, str) else str(output)
        )
    if kind == "reasoning":
        summary = "".join(
            str(p.get("text", "")) for p in wire.get("summary", []) if isinstance(p, dict)
        )
        return Reasoning(
            id=wire.get("id", ""), summary=summary, encrypted_content=wire.get("encrypted_content")
        )
    raise ValueError(f"unsupported item type {kind!r}")
