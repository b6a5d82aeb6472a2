"""The `apply_patch` tool: a function tool that takes the whole patch as its `input`.

Chat Completions has no freeform tools, so the patch travels as a JSON string argument. The
format and the all-or-nothing application live in `_patch`; this module only describes the
tool and turns a refused patch into a failed output the model can act on.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ._errors import CorralError
from ._patch import apply_patch
from ._registry import Tool, ToolContext, ToolOutput

APPLY_PATCH_DESCRIPTION = """\
Create, edit, move and delete text files with one patch. Put the whole patch in `input`:

*** Begin Patch
*** Update File: src/app.py
@@ def handle(request):
     user = load_user(request)
-    return render(user)
+    return render(user, theme=request.theme)
*** Add File: docs/notes.md
+# Notes
*** Delete File: old/unused.py
*** End Patch

Sections: `*** Add File: path` (every line of the new file starts with `+`), \
`*** Delete File: path`, and `*** Update File: path`, optionally followed by \
`*** Move to: new/path`. In an update, each change starts with `@@`; after it you may name a \
line just above the change, such as `@@ def handle(request):` or `@@ class Cart`, to tell apart \
places that look alike (stack several `@@` lines to narrow further). Then show about 3 lines of \
unchanged context above and below the change, each prefixed with a space, removed lines with \
`-` and added lines with `+`. Put `*** End of File` after a change that must sit at the end of \
the file. Paths are relative to the working directory. The patch is applied completely or not \
at all: if any part does not fit, no file changes and the error shows what did not match.\
"""


class ApplyPatchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: str = Field(description="The whole patch, from `*** Begin Patch` to `*** End Patch`.")


def apply_patch_tool() -> Tool[ApplyPatchArgs]:
    return Tool(
        name="apply_patch",
        description=APPLY_PATCH_DESCRIPTION,
        args=ApplyPatchArgs,
        handler=_apply_patch,
        mutating=True,
        parallel=False,
    )


async def _apply_patch(args: ApplyPatchArgs, ctx: ToolContext) -> ToolOutput:
    try:
        result = await apply_patch(args.input, cwd=ctx.cwd, profile=ctx.profile)
    except CorralError as exc:
        return ToolOutput.error(str(exc))
    return ToolOutput(result.summary())
