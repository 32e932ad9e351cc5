// The glue between VS Code and the modules beside it (which do not import `vscode` and are
// tested with node against a live server): commands, providers, the status bar, settings.
import * as vscode from "vscode";

import { LodeConnectionError, type LodeClient, type Range as LodeRange, type Subscription } from "@lode/client";

import { LiveSearch } from "./liveSearch.js";
import { definitionsAt, referencesAt, type Location as LodeLocation } from "./navigation.js";
import type { ResultItem } from "./results.js";
import { clientFor, providesFor, readSettings, rediscover, type LodeSettings } from "./settings.js";
import { describeError, failed, INITIAL_STATUS, opened, reduceStatus, statusView, type StatusState } from "./status.js";

/** The commands package.json contributes, each registered here (a test holds the two together). */
export const COMMANDS = {
  search: "lode.search",
  goToDefinition: "lode.goToDefinition",
  findReferences: "lode.findReferences",
} as const;

interface ResultPick extends vscode.QuickPickItem {
  result: ResultItem;
}

function toRange(range: LodeRange): vscode.Range {
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}

function toLocation(location: LodeLocation): vscode.Location {
  return new vscode.Location(vscode.Uri.parse(location.uri), toRange(location.range));
}

class LodeExtension implements vscode.Disposable {
  private settings: LodeSettings;
  private client: LodeClient;
  private subscription: Subscription | undefined;
  private state: StatusState = INITIAL_STATUS;
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];

  constructor() {
    this.settings = this.readSettings();
    this.client = clientFor(this.settings);
    this.item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
    this.item.command = COMMANDS.search;
    this.item.show();
    this.render();
    this.disposables.push(
      this.item,
      vscode.commands.registerCommand(COMMANDS.search, () => this.search()),
      vscode.commands.registerCommand(COMMANDS.goToDefinition, () => this.goToDefinition()),
      vscode.commands.registerCommand(COMMANDS.findReferences, () => this.findReferences()),
      vscode.languages.registerDefinitionProvider({ scheme: "file" }, {
        provideDefinition: (document, position, token) => this.provideDefinition(document, position, token),
      }),
      vscode.languages.registerReferenceProvider({ scheme: "file" }, {
        provideReferences: (document, position, context, token) => this.provideReferences(document, position, context, token),
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("lode")) this.reconnect();
      }),
    );
    this.follow();
  }

  private readSettings(): LodeSettings {
    const configuration = vscode.workspace.getConfiguration("lode");
    return readSettings((key) => configuration.get(key));
  }

  private reconnect(): void {
    this.settings = this.readSettings();
    this.switchTo(clientFor(this.settings));
  }

  private switchTo(client: LodeClient): void {
    this.client = client;
    this.subscription?.close();
    this.state = INITIAL_STATUS;
    this.render();
    this.follow();
  }

  private follow(): void {
    this.subscription = this.client.subscribe({
      onOpen: () => this.update(opened(this.state)),
      onEvent: (event) => this.update(reduceStatus(this.state, event)),
      onError: (error) => {
        this.update(failed(this.state, error));
        // nothing answers: a server started since (or on another port) says where in its discovery file
        const moved = error instanceof LodeConnectionError ? rediscover(this.client, this.settings) : undefined;
        if (moved) this.switchTo(moved);
      },
    });
  }

  private update(state: StatusState): void {
    this.state = state;
    this.render();
  }

  private render(): void {
    const view = statusView(this.state);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
  }

  private async search(): Promise<void> {
    const pick = vscode.window.createQuickPick<ResultPick>();
    pick.placeholder = "lode: search by meaning (a phrase, an identifier)";
    pick.matchOnDescription = false;
    pick.matchOnDetail = false;
    const live = new LiveSearch(this.client, {
      debounceMs: this.settings.searchDebounceMs,
      limit: this.settings.searchLimit,
      onResults: (items) => {
        // VS Code filters items by the typed text unless each one says it always shows
        pick.items = items.map((result) => ({ label: result.label, description: result.description, detail: result.detail, alwaysShow: true, result }));
      },
      onError: (error) => {
        pick.items = [];
        pick.title = describeError(error);
      },
      onBusy: (busy) => {
        pick.busy = busy;
        if (busy) pick.title = undefined;
      },
    });
    pick.onDidChangeValue((value) => live.update(value));
    pick.onDidChangeActive(([active]) => {
      if (active) void this.open(active.result.uri, active.result.range, true);
    });
    pick.onDidAccept(() => {
      const [chosen] = pick.selectedItems;
      if (chosen) void this.open(chosen.result.uri, chosen.result.range, false);
      pick.hide();
    });
    pick.onDidHide(() => {
      live.dispose();
      pick.dispose();
    });
    const editor = vscode.window.activeTextEditor;
    const selected = editor?.document.getText(editor.selection).trim();
    if (selected && !selected.includes("\n")) {
      pick.value = selected;
      live.update(selected);
    }
    pick.show();
  }

  private async open(uri: string, range: LodeRange, preview: boolean): Promise<void> {
    const selection = toRange(range);
    await vscode.window.showTextDocument(vscode.Uri.parse(uri), { selection, preview, preserveFocus: preview });
  }

  private async goToDefinition(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    const position = editor.selection.active;
    try {
      const found = await definitionsAt(this.client, editor.document.uri.toString(), position);
      if (found.length === 0) {
        void vscode.window.showInformationMessage("lode: no definition found for the word under the cursor");
        return;
      }
      const locations = found.map(toLocation);
      await vscode.commands.executeCommand("editor.action.goToLocations", editor.document.uri, position, locations, "goto", "lode: no definition");
    } catch (error) {
      void vscode.window.showWarningMessage(describeError(error));
    }
  }

  private async findReferences(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    const position = editor.selection.active;
    try {
      const found = await referencesAt(this.client, editor.document.uri.toString(), position, true);
      const locations = found.map(toLocation);
      await vscode.commands.executeCommand("editor.action.showReferences", editor.document.uri, position, locations);
    } catch (error) {
      void vscode.window.showWarningMessage(describeError(error));
    }
  }

  private abortOn(token: vscode.CancellationToken): AbortSignal {
    const controller = new AbortController();
    token.onCancellationRequested(() => controller.abort());
    return controller.signal;
  }

  private async provideDefinition(document: vscode.TextDocument, position: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Location[]> {
    if (!providesFor(this.settings, document.languageId)) return [];
    try {
      return (await definitionsAt(this.client, document.uri.toString(), position, this.abortOn(token))).map(toLocation);
    } catch {
      return []; // a provider stays quiet: the status bar says what is wrong
    }
  }

  private async provideReferences(
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.ReferenceContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.Location[]> {
    if (!providesFor(this.settings, document.languageId)) return [];
    try {
      const found = await referencesAt(this.client, document.uri.toString(), position, context.includeDeclaration, this.abortOn(token));
      return found.map(toLocation);
    } catch {
      return [];
    }
  }

  dispose(): void {
    this.subscription?.close();
    for (const disposable of this.disposables) disposable.dispose();
  }
}

/** VS Code calls this once the window has started (activationEvents: onStartupFinished). */
export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(new LodeExtension());
}

/** Nothing to do: the disposables pushed in `activate` end with the extension. */
export function deactivate(): void {}
