import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { agentLabel } from '../src/labels';
import * as protocol from '../src/protocol';

const root = path.resolve(__dirname, '..', '..');
const serverProtocol = path.resolve(root, '..', 'server', 'memory_lens', 'lsp', 'protocol.py');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string }[]; configuration: { properties: Record<string, unknown> } };
};

/** NAME = "value" pairs of the server's constants module. */
function pythonConstants(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^([A-Z_]+)\s*=\s*"([^"]*)"\s*(?:#.*)?$/gm)) {
    out.set(m[1], m[2]);
  }
  return out;
}

describe('workspace trust', () => {
  it('restricts every setting that chooses which files the server writes, and keeps the opt-in machine-wide', () => {
    const trust = (manifest as unknown as {
      capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
    }).capabilities.untrustedWorkspaces;
    assert.equal(trust.supported, 'limited');
    for (const key of ['server.command', 'filenames', 'globalDir', 'notes.layout', 'notes.globalDir', 'followOutsideLinks']) {
      assert.ok(trust.restrictedConfigurations.includes(`${protocol.SETTINGS_SECTION}.${key}`), key);
    }
    const props = manifest.contributes.configuration.properties as Record<string, { scope?: string }>;
    assert.equal(props[`${protocol.SETTINGS_SECTION}.followOutsideLinks`].scope, 'machine');
  });
});

describe('protocol names', () => {
  it('match the server constants module, name for name', { skip: !fs.existsSync(serverProtocol) && 'no server checkout' }, () => {
    const server = pythonConstants(fs.readFileSync(serverProtocol, 'utf8'));
    const client = protocol as unknown as Record<string, unknown>;
    // Every string constant on either side is on the other (a rename fails here), save the client's
    // own views and context key. Lists are compared by tests/unit/test_protocol_mirror.py.
    const clientOnly = new Set(['PANEL_VIEW_ID', 'NOTES_VIEW_ID', 'AGENTS_VIEW_ID', 'NOTES_SEARCH_CONTEXT', 'EFFECTIVE_SCHEME']);
    const clientStrings = Object.keys(client).filter((name) => typeof client[name] === 'string' && !clientOnly.has(name));
    assert.deepEqual(clientStrings.sort(), [...server.keys()].sort());
    for (const name of clientStrings) {
      assert.equal(client[name], server.get(name), name);
    }
  });

  it('keep palette command ids apart from server command ids', () => {
    const clientIds = Object.values(protocol.CLIENT_COMMANDS) as string[];
    for (const id of clientIds) {
      assert.ok(!protocol.SERVER_COMMANDS.includes(id), id);
    }
    const contributed = manifest.contributes.commands.map((c) => c.command);
    for (const id of contributed) {
      assert.ok(!protocol.SERVER_COMMANDS.includes(id), `package.json contributes server command ${id}`);
    }
    assert.deepEqual([...contributed].sort(), [...clientIds].sort());
  });

  it('contribute every setting the server reads, with a description', () => {
    const props = manifest.contributes.configuration.properties as Record<string, { markdownDescription?: string; description?: string }>;
    for (const key of ['filenames', 'globalDir', 'tokenBudget', 'agents', 'debug', 'notes.layout', 'notes.globalDir', 'followOutsideLinks', 'save.preview', 'server.command', 'trace.server']) {
      const prop = props[`${protocol.SETTINGS_SECTION}.${key}`];
      assert.ok(prop, key);
      assert.ok((prop.markdownDescription ?? prop.description ?? '').length > 20, `${key} has no description`);
    }
  });
});

describe('the agent setting', () => {
  it('describes each agent by the label the picker shows for it', () => {
    const setting = manifest.contributes.configuration.properties['memoryLens.agent'] as { enum: string[]; enumDescriptions: string[] };
    assert.deepEqual(setting.enumDescriptions, setting.enum.map((agent) => agentLabel(agent)));
  });
});
