/**
 * The VS Code settings the server's `copilot-vscode` view follows (docs/agents.md#copilot-chat-in-vs-code;
 * server/memory_lens/core/agents/copilot_vscode.py), sent as `vscodeSettings` with `memory/effective`
 * and `memory/explain` (docs/lsp.md): setting ID to its value.
 */
export const CHAT_SETTINGS: readonly string[] = [
  'github.copilot.chat.codeGeneration.useInstructionFiles', 'chat.useAgentsMdFile', 'chat.useNestedAgentsMdFiles',
  'chat.useClaudeMdFile', 'chat.includeApplyingInstructions', 'chat.instructionsFilesLocations',
];

/** `vscodeSettings`: each of CHAT_SETTINGS that GET (a configuration's `get`) has a value for. */
export function chatSettings(get: (id: string) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const id of CHAT_SETTINGS) {
    const value = get(id);
    if (value !== undefined) {
      out[id] = value;
    }
  }
  return out;
}
