import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { CHAT_SETTINGS, chatSettings } from '../src/chatSettings';

const root = path.resolve(__dirname, '..', '..');

describe('chat settings for copilot-vscode', () => {
  it('sends the chat settings the server follows, each that has a value, as given', () => {
    const values: Record<string, unknown> = {
      'chat.useAgentsMdFile': false, 'chat.instructionsFilesLocations': { '.github/instructions': true },
      'editor.fontSize': 12,
    };
    assert.deepEqual(chatSettings((id) => values[id]), {
      'chat.useAgentsMdFile': false, 'chat.instructionsFilesLocations': { '.github/instructions': true },
    });
    assert.deepEqual(chatSettings(() => undefined), {});
  });

  it('names the settings the server reads (server/memory_lens/core/agents/copilot_vscode.py)', () => {
    const server = fs.readFileSync(path.resolve(root, '..', 'server', 'memory_lens', 'core', 'agents', 'copilot_vscode.py'), 'utf8');
    const ids = [...server.matchAll(/^[A-Z_]+ = "((?:chat|github\.copilot\.chat)\.[A-Za-z.]+)"$/gm)].map((m) => m[1]);
    assert.deepEqual([...ids].sort(), [...CHAT_SETTINGS].sort());
  });
});
