/** The status bar item: memory files and tokens for the active file; a click shows the effective memory. */

import * as os from 'node:os';
import * as vscode from 'vscode';
import { statusBarText, statusBarTooltip } from './labels';
import type { MemoryModel, MemorySnapshot } from './model';
import { CLIENT_COMMANDS } from './protocol';

export class MemoryStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: vscode.Disposable;

  constructor(model: MemoryModel) {
    this.item = vscode.window.createStatusBarItem('memoryLens.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Memory Lens';
    this.item.command = CLIENT_COMMANDS.showEffectiveMemory;
    this.subscription = model.onDidChange((snapshot) => this.show(snapshot));
    this.show(model.snapshot);
  }

  private show(snapshot: MemorySnapshot | undefined): void {
    if (!snapshot) {
      this.item.hide();
      return;
    }
    const memory = snapshot.memory;
    this.item.text = statusBarText(memory, snapshot.agent);
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.appendText(memory ? statusBarTooltip(memory, os.homedir()) : snapshot.error ?? 'Memory Lens');
    tooltip.appendMarkdown(`\n\n[$(account) Choose agent…](command:${CLIENT_COMMANDS.chooseAgent} "Choose whose memory to show")`);
    tooltip.isTrusted = { enabledCommands: [CLIENT_COMMANDS.chooseAgent] };
    this.item.tooltip = tooltip;
    this.item.accessibilityInformation = { label: `Memory Lens: ${this.item.text.replace('$(book) ', '')}` };
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
