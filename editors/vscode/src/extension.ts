// The VS Code side: read the settings, start `qlint server` through vscode-languageclient,
// restart it when the command changes, forward the runtime mode when only that changes.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";

import { QlintSettings, initializationOptions, isExecutable, needsRestart, serverCommand } from "./serverOptions";

let client: LanguageClient | undefined;
let current: QlintSettings | undefined;

function readSettings(): QlintSettings {
  const config = vscode.workspace.getConfiguration("qlint");
  return {
    path: config.get<string[]>("path", []),
    args: config.get<string[]>("args", []),
    runtime: config.get<string>("runtime", ""),
  };
}

async function start(output: vscode.OutputChannel): Promise<void> {
  const settings = readSettings();
  const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
  const command = serverCommand(settings, { platform: process.platform, env: process.env, workspaceFolders: folders, isExecutable });
  output.appendLine(`qlint: starting ${command.command} ${command.args.join(" ")} (${command.origin})`);
  const serverOptions: ServerOptions = {
    command: command.command,
    args: command.args,
    options: { cwd: command.cwd },
    transport: TransportKind.stdio,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "python" }],
    initializationOptions: initializationOptions(settings),
    outputChannel: output,
  };
  client = new LanguageClient("qlint", "qlint", serverOptions, clientOptions);
  current = settings;
  await client.start();
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running !== undefined) {
    await running.stop();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("qlint");
  context.subscriptions.push(output);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration("qlint")) {
        return;
      }
      const settings = readSettings();
      if (client === undefined || current === undefined || needsRestart(current, settings)) {
        await stop();
        await start(output);
        return;
      }
      current = settings;
      await client.sendNotification("workspace/didChangeConfiguration", {
        settings: { qlint: { runtime: settings.runtime || null } },
      });
    }),
  );
  context.subscriptions.push(
    vscode.commands.registerCommand("qlint.restart", async () => {
      await stop();
      await start(output);
    }),
  );
  try {
    await start(output);
  } catch (error) {
    void vscode.window.showErrorMessage(`qlint: the language server did not start: ${error}`);
  }
}

export async function deactivate(): Promise<void> {
  await stop();
}
