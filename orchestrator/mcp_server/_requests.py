"""From a start tool's arguments to the service request `corral serve` would have been sent.

The request models (`service.ExecRequest` and its kin) check inline issues, labels and patches
with the pipelines' own parsers; an items file is read here, under the server's working folder only
(`_files`). What the request may then ask of the server (folders, sandbox, endpoint) is the run
manager's check against the server's policy, as for the HTTP API.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..service import (
    ExecRequest,
    FanoutRequest,
    ReviewRequest,
    ServicePolicy,
    ServiceRequest,
    TriageRequest,
)
from ._errors import ToolInputRefused
from ._files import read_items_file
from ._inputs import ExecArgs, FanoutArgs, ReviewArgs, TriageArgs

M = TypeVar("M", bound=BaseModel)
StartArgs = FanoutArgs | ReviewArgs | TriageArgs | ExecArgs


def service_request(args: StartArgs, policy: ServicePolicy) -> ServiceRequest:
    """The run request `args` asks for; `ToolInputRefused` saying what is wrong if none."""
    fields: dict[str, Any] = {k: v for k, v in args.common().items() if v is not None}
    fields = _anchored(fields, policy)
    if isinstance(args, FanoutArgs):
        items = args.items
        if args.items_file is not None:
            items = read_items_file(
                args.items_file, workdir=policy.workdir, home=policy.home, roots=policy.roots
            )
        fields |= {
            "kind": "fanout",
            "items": items,
            "template": args.template,
            "schema": args.result_schema,
            "concurrency": args.concurrency,
            "sandbox": args.sandbox,
            "max_result_tries": args.max_result_tries,
        }
        return _built(FanoutRequest, fields)
    if isinstance(args, ReviewArgs):
        fields |= args.model_dump(include={"repo", "range", "patch", "concurrency", "fail_on"})
        return _built(ReviewRequest, _anchored({**fields, "kind": "review"}, policy))
    if isinstance(args, TriageArgs):
        fields |= args.model_dump(include={"issues", "labels", "repo", "concurrency"})
        return _built(TriageRequest, _anchored({**fields, "kind": "triage"}, policy))
    fields |= {"kind": "exec", "task": args.task, "role": args.role, "sandbox": args.sandbox}
    return _built(ExecRequest, fields)


def _anchored(fields: dict[str, Any], policy: ServicePolicy) -> dict[str, Any]:
    """Relative folders taken from the server's working folder, whatever the process's is."""
    for name in ("cd", "repo"):
        value = fields.get(name)
        if isinstance(value, str) and not value.startswith(("/", "~")):
            fields = {**fields, name: str(policy.workdir / value)}
    return fields


def _built(model: type[M], fields: dict[str, Any]) -> M:
    try:
        return model.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise ToolInputRefused(f"invalid arguments: {first_problem(exc)}") from None


def first_problem(exc: ValidationError) -> str:
    """The first validation error as one line: where, then what (pydantic's own words)."""
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "arguments"
    message = str(first.get("msg", "")).removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {message}{more}"
