"""The Memory Lens MCP server (`memory-lens mcp`): the tools over stdio, on the official `mcp` SDK
(2.x: `mcp.server.mcpserver.MCPServer`).

Every tool is a typed function (its argument types in `schemas`): the SDK makes its JSON Schema
from the signature and validates the arguments against it before the tool runs; an unknown
argument is refused too (`additionalProperties: false`), and a failed check is one line naming
the argument. `effective_memory`, `explain_context` and `list_memory_entries` ask the client for
its roots (`roots/list`) and read only inside them (`core/read_policy.py`). `save_memory` asks the user
first where the client supports form elicitation: the message shows the diff; the form lets them
edit the text and choose "always allow" for that scope. The questions are asked through the SDK's
resolvers, which use whichever way the negotiated protocol version has (a request in the middle of
the call, or an input-required round trip). Without elicitation the client's own tool approval is
the confirmation, and the fact is written.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations at run time, and
# `save_memory`'s refers to a function local to `build_server`.
import logging
import sys
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import ListRootsResult, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError, create_model

from memory_lens import __version__
from memory_lens.core.discovery import Scope
from memory_lens.core.secrets import SecretError
from memory_lens.mcp_server import tools
from memory_lens.mcp_server.approvals import approval_name
from memory_lens.mcp_server.schemas import (
    DESCRIPTIONS,
    INSTRUCTIONS,
    MAX_FACT_CHARS,
    AgentName,
    AgentNames,
    Cursor,
    ListScope,
    MemoryPath,
    NoteName,
    NoteScope,
    NotesLimit,
    PageSize,
    Tags,
    WriteScope,
    given,
    maybe,
)
from memory_lens.mcp_server.tools import SavePlan, ToolContext, ToolFailure

log = logging.getLogger("memory_lens.mcp")
SERVER_NAME = "memory-lens"
SAVE_TOOL = "save_memory"


class CheckedTool(Tool):
    """A tool whose failed argument check is one line: `invalid arguments: scope: Input should be …`."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as err:
            if not isinstance(err.__cause__, ValidationError):
                raise
            problems: dict[str, str] = {}
            for e in err.__cause__.errors():
                if e["loc"][-1:] != ("none",):  # the null an optional argument may also be
                    problems.setdefault(".".join(str(part) for part in e["loc"][:1]), e["msg"])
            detail = "; ".join(f"{where}: {msg}" if where else msg for where, msg in problems.items())
            raise ToolError(f"Error executing tool {self.name}: invalid arguments: {detail}") from None


def _tool(fn: Callable[..., Any], read_only: bool, destructive: bool = False) -> Tool:
    """FN as the tool of its name, its schema made from its signature, no argument but its own taken."""
    tool = CheckedTool.from_function(
        fn, name=fn.__name__, description=DESCRIPTIONS[fn.__name__],
        annotations=ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive if not read_only else None,
                                    open_world_hint=False))
    arguments = tool.fn_metadata.arg_model
    strict = type(arguments.__name__, (arguments,), {"__module__": __name__,
                                                      "model_config": {**arguments.model_config, "extra": "forbid"}})
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    return tool


def _run(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return call()
    except ToolFailure as err:
        raise ToolError(tools.for_mcp(str(err))) from None


def client_roots(context: Context) -> ListRoots | None:
    """The client's roots (`roots/list`), asked for when it declared the capability (None: it did not)."""
    caps = context.client_capabilities
    return ListRoots() if caps is not None and caps.roots is not None else None


Roots = Annotated[ListRootsResult | None, Resolve(client_roots)]


def _roots(result: ListRootsResult | None) -> list[Path]:
    return tools.root_paths([str(r.uri) for r in result.roots]) if result is not None else []


# save_memory and its confirmation ------------------------------------------------------------------


class Decided(BaseModel):
    """What `save_memory` does without asking: why, and the plan (None when it cannot be made)."""

    reason: str  # "already-present", "always-allowed", "no-elicitation", "invalid"
    error: str = ""
    plan: Any = None


def supports_form_elicitation(ctx: Context) -> bool:
    caps = ctx.client_capabilities
    elicitation = caps.elicitation if caps is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def approval_form(text: str, scope: Scope, in_project: bool) -> type[BaseModel]:
    """The form the user fills in: the entry (editable) and whether to stop asking for saves to
    this SCOPE from here (a project, or the server's directory outside one)."""
    here = "this project" if in_project else "this directory"
    if scope is Scope.PROJECT:
        title, description = f"Always allow for {here}", f"Save facts to {here}'s memory without asking again"
    else:
        title = f"Always allow saving to global memory from {here}"
        description = f"Save facts to your global memory file without asking again when called from {here}"
    return create_model(
        "SaveMemoryApproval",
        text=(str, Field(default=text, title="Entry to save", description="Edit the text before it is saved")),
        always_allow=(bool, Field(default=False, title=title, description=description)),
    )


def approval_message(plan: SavePlan) -> str:
    return (f"Save to {plan.scope.value} memory {plan.path}?\n\n"
            f"{plan.diff or '(the file is created)'}\n"
            "Approve, edit the text first, or decline.")


class SecretApproval(BaseModel):
    """The form shown when the fact looks like it holds a secret: the one way to save it anyway
    (no argument of `save_memory` can; an "always allow" does not cover it)."""

    save_anyway: bool = Field(default=False, title="Save it anyway",
                              description="It is not a secret, or I want it in this memory file")


def secret_message(plan: SavePlan) -> str:
    """The question for a fact holding a secret: its kind and position, not the secret or a diff."""
    return (f"The fact to save to {plan.scope.value} memory {plan.path} {plan.secret.describe()}. Agents send "
            "this file to their model, and it may be committed. Save it anyway?")


def build_server(ctx: ToolContext) -> MCPServer:
    """The MCP server with every tool working on CTX."""

    def memory_create(name: given(str, "Unique name for the note (1-128 characters)"),
                      content: given(str, "Note content"), tags: Tags = None,
                      scope: maybe(WriteScope, "Storage scope. Default: project inside a project, else global.") = None,
                      ) -> dict[str, Any]:
        return _run(lambda: tools.memory_create(ctx, name, content, tags, scope))

    def memory_read(name: NoteName, scope: NoteScope = None) -> dict[str, Any]:
        return _run(lambda: tools.memory_read(ctx, name, scope))

    def memory_list(search: maybe(str, "Only notes matching this query (the syntax of memory_search); empty: all "
                                       "notes") = None,
                    tags: maybe(list[str], "Only notes having all of these tags") = None, scope: ListScope = None,
                    cursor: Cursor = None, limit: NotesLimit = None) -> dict[str, Any]:
        return _run(lambda: tools.memory_list(ctx, search or "", tags, scope, cursor, limit))

    def memory_edit(name: NoteName, content: given(str, "The new content (replaces the old)"),
                    scope: NoteScope = None) -> dict[str, Any]:
        return _run(lambda: tools.memory_edit(ctx, name, content, scope))

    def memory_delete(name: NoteName, scope: NoteScope = None) -> dict[str, Any]:
        return _run(lambda: tools.memory_delete(ctx, name, scope))

    def memory_search(query: given(str, "What to look for"), scope: ListScope = None, cursor: Cursor = None,
                      limit: NotesLimit = None) -> dict[str, Any]:
        return _run(lambda: tools.memory_search(ctx, query, scope, cursor, limit))

    def list_memory_entries(scope: maybe(Literal["project", "global", "all"],
                                         "Which memory files: project, global or all (default).") = None,
                            path: MemoryPath = None, cursor: Cursor = None,
                            limit: maybe(PageSize, "Entries per page (default 50).") = None,
                            *, roots: Roots) -> dict[str, Any]:
        return _run(lambda: tools.list_memory_entries(ctx, scope, path, cursor, limit, _roots(roots)))

    def remove_memory_entry(text: given(str, "The entry's text"),
                            scope: maybe(WriteScope, "Only look in project or global memory files (default: both).")
                            = None) -> dict[str, Any]:
        return _run(lambda: tools.remove_memory_entry(ctx, text, scope))

    def effective_memory(path: MemoryPath = None, agent: AgentName = None, *, roots: Roots) -> dict[str, Any]:
        return _run(lambda: tools.effective_memory(ctx, path, agent, _roots(roots)))

    def explain_context(path: given(str, "A file or directory"), agents: AgentNames = None,
                        *, roots: Roots) -> dict[str, Any]:
        return _run(lambda: tools.explain_context(ctx, path, agents, _roots(roots)))

    def ask_to_save(fact: str, scope: str | None, context: Context) -> Elicit[Any] | Decided:
        """Decide whether the user must be asked, and ask (the SDK sends the question)."""
        try:
            plan = tools.plan_save(ctx, fact, scope)
        except ToolFailure as err:
            return Decided(reason="invalid", error=str(err))
        if plan.already_present:
            return Decided(reason="already-present", plan=plan)
        if plan.secret is not None:  # only the user may allow it: never "always allow", never without asking
            if not supports_form_elicitation(context):
                return Decided(reason="invalid", error=f"{SecretError(plan.secret)}: {tools.SECRET_ADVICE}")
            return Elicit(secret_message(plan), SecretApproval)
        if ctx.approvals.allowed(approval_name(SAVE_TOOL, plan.scope.value)):
            return Decided(reason="always-allowed", plan=plan)
        if not supports_form_elicitation(context):
            return Decided(reason="no-elicitation", plan=plan)
        return Elicit(approval_message(plan), approval_form(plan.text, plan.scope, ctx.project_root is not None))

    def save_memory(fact: Annotated[str, Field(max_length=MAX_FACT_CHARS, description=(
                        "The fact to remember: one clear, self-contained statement, e.g. 'My favourite colour is "
                        f"blue' (at most {MAX_FACT_CHARS} characters)."))],
                    scope: maybe(WriteScope, "'project' saves to the project's GEMINI.md (for this project only); "
                                             "'global' to the user's ~/.gemini/GEMINI.md (every project). Default: "
                                             "project inside a project, else global.") = None,
                    *, answer: Annotated[ElicitationResult[Any], Resolve(ask_to_save)]) -> dict[str, Any]:
        if not isinstance(answer, AcceptedElicitation):
            return {"saved": False, "declined": True,
                    "message": "The user declined; nothing was written. Do not save this again unless asked."}
        data = answer.data
        if isinstance(data, SecretApproval):
            if not data.save_anyway:
                return {"saved": False, "declined": True,
                        "message": "The user did not confirm saving a secret; nothing was written. Do not save it."}
            plan = tools.plan_save(ctx, fact, scope)
            return _run(lambda: tools.save_fact(ctx, plan.text, plan.scope, allow_secret=True))
        if isinstance(data, Decided):
            if data.reason == "invalid":
                raise ToolError(tools.for_mcp(data.error))
            plan: SavePlan = data.plan
            return _run(lambda: tools.save_fact(ctx, plan.text, plan.scope))
        plan = tools.plan_save(ctx, fact, scope)  # where it goes (the user may have edited only the text)
        result = _run(lambda: tools.save_fact(ctx, data.text, plan.scope))
        result["edited"] = data.text.strip() != plan.text
        if data.always_allow:
            warning = ctx.approvals.allow(approval_name(SAVE_TOOL, plan.scope.value))
            result["always_allow"] = warning is None
            if warning:
                result["warnings"] = [warning]
        return result

    registered = [
        _tool(memory_create, read_only=False),
        _tool(memory_read, read_only=True),
        _tool(memory_list, read_only=True),
        _tool(memory_edit, read_only=False, destructive=True),
        _tool(memory_delete, read_only=False, destructive=True),
        _tool(memory_search, read_only=True),
        _tool(save_memory, read_only=False),
        _tool(list_memory_entries, read_only=True),
        _tool(remove_memory_entry, read_only=False, destructive=True),
        _tool(effective_memory, read_only=True),
        _tool(explain_context, read_only=True),
    ]
    return MCPServer(SERVER_NAME, title="Memory Lens", version=__version__, instructions=INSTRUCTIONS,
                     tools=registered, log_level="WARNING")


def run_stdio(ctx: ToolContext, debug: bool = False) -> None:
    """Serve MCP on stdin/stdout until the client closes it. Logs go to stderr only."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("memory-lens: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, handlers=[handler], force=True)
    server = build_server(ctx)
    try:
        server.run("stdio")
    finally:
        ctx.store.close()


def make_context(directory: Path, settings: Any) -> ToolContext:
    """The context of a server for DIRECTORY's project, with SETTINGS (`core.settings.Settings`:
    the memory files, the notes layout and directory, links, limits)."""
    from memory_lens.core.discovery import find_project_root
    from memory_lens.core.notes import NotesStore, notes_settings
    from memory_lens.mcp_server.approvals import Approvals

    root = find_project_root(directory)
    store = NotesStore(notes_settings(settings), root, freshness=1.0,
                       follow_outside_links=settings.follow_outside_links)
    store.index.start_refresh()  # in-place edits picked up off the request path; stopped by close()
    return ToolContext(directory, settings, store, Approvals(root or directory))


__all__ = ["Scope", "build_server", "make_context", "run_stdio"]
