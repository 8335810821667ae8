"""The Memory Lens MCP server (`memory-lens mcp`): notes and memory-file tools for agents.

`tools` and `approvals` hold the logic and import no MCP code; `server` wires them to the SDK,
which is imported only when `memory-lens mcp` runs.
"""
