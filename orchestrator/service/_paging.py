"""Pages of the run list: `GET /v1/runs?limit=N&after=RUN`, oldest first.

A page holds at most `limit` runs (`DEFAULT_LIMIT` when absent, never more than `MAX_LIMIT`),
those created after the run `after` names; `has_more` says whether another page follows and
`next` is its path, with the same filters. What the list holds is the handler's business.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
_DIGITS = re.compile(r"[0-9]{1,9}")


class BadPage(ValueError):
    """The paging parameters cannot be honoured; the message says what to send instead."""


def page_of(runs: list[dict[str, Any]], query: Mapping[str, str]) -> dict[str, Any]:
    """The page of `runs` (summaries with `id` and `created_at`) that `query` asks for."""
    limit = _limit(query.get("limit"))
    ordered = sorted(runs, key=lambda run: (run["created_at"], run["id"]))
    after = query.get("after")
    if after is not None:
        ids = [run["id"] for run in ordered]
        if after not in ids:
            shown = after[:60] + ("…" if len(after) > 60 else "")
            raise BadPage(f"after={shown} is no run in this list; start again without it")
        ordered = ordered[ids.index(after) + 1 :]
    page = ordered[:limit]
    body: dict[str, Any] = {"runs": page, "has_more": len(ordered) > limit}
    if body["has_more"]:
        more = {**{k: v for k, v in query.items() if k == "status"}, "limit": str(limit)}
        body["next"] = f"/v1/runs?{urlencode({**more, 'after': page[-1]['id']})}"
    return body


def _limit(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    # ASCII digits only, and few of them: `str.isdigit` also takes "²" (which `int` refuses)
    # and `int` refuses more than 4,300 digits; either would be a 500, not the caller's 422.
    text = raw.strip()
    if not _DIGITS.fullmatch(text) or not 1 <= int(text) <= MAX_LIMIT:
        shown = raw[:20] + ("…" if len(raw) > 20 else "")
        raise BadPage(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {shown!r}")
    return int(text)
