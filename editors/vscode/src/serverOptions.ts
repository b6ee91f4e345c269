// How the extension starts `qlint server`: which executable, which arguments, which
// initializationOptions. Kept free of the `vscode` module so it is unit-tested under plain
// node (`npm test`); `extension.ts` only feeds it the settings and the environment.
import * as fs from "node:fs";
import * as path from "node:path";

export type RuntimeMode = "" | "off" | "on-save";

export interface QlintSettings {
  path: string[];
  args: string[];
  runtime: RuntimeMode | string;
}

export interface Environment {
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
  workspaceFolders: string[];
  isExecutable: (file: string) => boolean;
}

export interface ServerCommand {
  command: string;
  args: string[];
  cwd?: string;
  // Where the command came from, for the output channel.
  origin: "setting" | "workspace environment" | "PATH" | "python fallback";
}

export const RUNTIME_MODES: readonly string[] = ["", "off", "on-save"];

export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function executableNames(name: string, platform: NodeJS.Platform, env: Environment["env"]): string[] {
  if (platform !== "win32") {
    return [name];
  }
  const extensions = (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter(Boolean);
  return [name, ...extensions.map((ext) => name + ext.toLowerCase())];
}

/** The first `name` on PATH, or undefined. */
export function onPath(name: string, environment: Environment): string | undefined {
  const pathVar = environment.env.PATH ?? environment.env.Path ?? "";
  const separator = environment.platform === "win32" ? ";" : ":";
  for (const dir of pathVar.split(separator).filter(Boolean)) {
    for (const candidate of executableNames(name, environment.platform, environment.env)) {
      const full = path.join(dir, candidate);
      if (environment.isExecutable(full)) {
        return full;
      }
    }
  }
  return undefined;
}

/** `qlint` of a virtual environment in one of the workspace folders (the project's own). */
export function inWorkspaceEnvironment(environment: Environment): string | undefined {
  const bin = environment.platform === "win32" ? "Scripts" : "bin";
  for (const folder of environment.workspaceFolders) {
    for (const venv of [".venv", "venv"]) {
      for (const name of executableNames("qlint", environment.platform, environment.env)) {
        const full = path.join(folder, venv, bin, name);
        if (environment.isExecutable(full)) {
          return full;
        }
      }
    }
  }
  return undefined;
}

/** The command that starts the server, from the settings and what is installed. */
export function serverCommand(settings: QlintSettings, environment: Environment): ServerCommand {
  const cwd = environment.workspaceFolders[0];
  const extra = settings.args ?? [];
  const configured = (settings.path ?? []).filter((part) => part.trim() !== "");
  if (configured.length > 0) {
    const [command, ...rest] = configured;
    return { command, args: [...rest, "server", ...extra], cwd, origin: "setting" };
  }
  const local = inWorkspaceEnvironment(environment);
  if (local !== undefined) {
    return { command: local, args: ["server", ...extra], cwd, origin: "workspace environment" };
  }
  const global = onPath("qlint", environment);
  if (global !== undefined) {
    return { command: global, args: ["server", ...extra], cwd, origin: "PATH" };
  }
  const python = environment.platform === "win32" ? "python" : "python3";
  return { command: python, args: ["-m", "qlint", "server", ...extra], cwd, origin: "python fallback" };
}

/** initializationOptions (and didChangeConfiguration settings) for the runtime mode;
 *  an empty mode leaves the choice to the project's configuration. */
export function initializationOptions(settings: QlintSettings): { runtime?: string } {
  if (!settings.runtime) {
    return {};
  }
  if (!RUNTIME_MODES.includes(settings.runtime)) {
    throw new Error(`qlint.runtime: expected "off" or "on-save", got ${JSON.stringify(settings.runtime)}`);
  }
  return { runtime: settings.runtime };
}

/** Whether a settings change needs a new server process (the command changed), or only a
 *  didChangeConfiguration (the runtime mode). */
export function needsRestart(before: QlintSettings, after: QlintSettings): boolean {
  return JSON.stringify([before.path, before.args]) !== JSON.stringify([after.path, after.args]);
}
