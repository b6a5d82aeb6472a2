"""How many images a conversation carries: the newest `MAX_CONTEXT_IMAGES`, no more.

Each image a tool shows (`view_image`) rides in every later request. A model that looks at
one image after another must not grow the requests (and the process's memory) without end, so
once the history holds more, the oldest image messages become a marked note saying what went.
"""

from __future__ import annotations

from ._fragments import IMAGE_DROPPED
from ._items import Item, Message

MAX_CONTEXT_IMAGES = 8
"""Images kept in the history the model sees; older ones are replaced by a note."""


def retire_old_images(history: list[Item], keep: int = MAX_CONTEXT_IMAGES) -> None:
    """Replace, in place, the oldest image messages of `history` beyond the newest `keep`; the
    newest message stays whole, whatever it holds (the model just asked to see it)."""
    holding = [i for i, item in enumerate(history) if isinstance(item, Message) and item.images]
    excess = sum(len(_images(history[i])) for i in holding) - keep
    for index in holding[:-1]:
        if excess <= 0:
            return
        dropped = len(_images(history[index]))
        history[index] = Message(role="user", text=_note(dropped, keep))
        excess -= dropped


def _images(item: Item) -> tuple[str, ...]:
    return item.images if isinstance(item, Message) else ()


def _note(count: int, keep: int) -> str:
    what = "an image" if count == 1 else f"{count} images"
    return IMAGE_DROPPED.render(
        f"\n{what} shown here earlier left the conversation: only the newest {keep} images stay."
        " View it again if you still need it.\n"
    )
