import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import {
  Environment,
  QlintSettings,
  initializationOptions,
  isExecutable,
  needsRestart,
  serverCommand,
} from "../serverOptions";

const NONE: QlintSettings = { path: [], args: [], runtime: "" };

function environment(files: string[], extra: Partial<Environment> = {}): Environment {
  const executables = new Set(files);
  return {
    platform: "linux",
    env: { PATH: "/usr/local/bin:/usr/bin" },
    workspaceFolders: ["/work/project"],
    isExecutable: (file) => executables.has(file),
    ...extra,
  };
}

test("the path setting wins and takes the extra arguments after `server`", () => {
  const settings = { ...NONE, path: ["python3", "-m", "qlint"], args: ["--log", "x"] };
  const command = serverCommand(settings, environment(["/usr/bin/qlint", "/work/project/.venv/bin/qlint"]));
  assert.deepEqual(command, {
    command: "python3",
    args: ["-m", "qlint", "server", "--log", "x"],
    cwd: "/work/project",
    origin: "setting",
  });
});

test("a blank path setting is no setting", () => {
  const command = serverCommand({ ...NONE, path: [" "] }, environment(["/usr/bin/qlint"]));
  assert.equal(command.origin, "PATH");
});

test("the workspace's virtual environment comes before PATH", () => {
  const command = serverCommand(NONE, environment(["/usr/bin/qlint", "/work/project/venv/bin/qlint"]));
  assert.equal(command.command, "/work/project/venv/bin/qlint");
  assert.deepEqual(command.args, ["server"]);
  assert.equal(command.origin, "workspace environment");
});

test("PATH is searched in order", () => {
  const command = serverCommand(NONE, environment(["/usr/bin/qlint", "/usr/local/bin/qlint"]));
  assert.equal(command.command, "/usr/local/bin/qlint");
});

test("Windows: Scripts folder, PATHEXT and ; separators", () => {
  const env = { PATH: "C:\\tools;C:\\py", PATHEXT: ".EXE;.CMD" };
  const found = path.join("C:\\py", "qlint.exe");
  const command = serverCommand(NONE, environment([found], { platform: "win32", env, workspaceFolders: [] }));
  assert.equal(command.command, found);
  const fallback = serverCommand(NONE, environment([], { platform: "win32", env, workspaceFolders: [] }));
  assert.deepEqual([fallback.command, ...fallback.args], ["python", "-m", "qlint", "server"]);
});

test("nothing installed: python3 -m qlint", () => {
  const command = serverCommand({ ...NONE, args: ["-v"] }, environment([]));
  assert.deepEqual([command.command, ...command.args], ["python3", "-m", "qlint", "server", "-v"]);
  assert.equal(command.origin, "python fallback");
});

test("the runtime mode becomes initializationOptions; empty leaves it to the project", () => {
  assert.deepEqual(initializationOptions(NONE), {});
  assert.deepEqual(initializationOptions({ ...NONE, runtime: "on-save" }), { runtime: "on-save" });
  assert.deepEqual(initializationOptions({ ...NONE, runtime: "off" }), { runtime: "off" });
  assert.throws(() => initializationOptions({ ...NONE, runtime: "always" }), /expected "off" or "on-save"/);
});

test("only a changed command restarts the server", () => {
  assert.equal(needsRestart(NONE, { ...NONE, runtime: "on-save" }), false);
  assert.equal(needsRestart(NONE, { ...NONE, args: ["-v"] }), true);
  assert.equal(needsRestart(NONE, { ...NONE, path: ["/opt/qlint"] }), true);
});

test("isExecutable checks the real file system", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "qlint-vscode-"));
  const script = path.join(dir, "qlint");
  fs.writeFileSync(script, "#!/bin/sh\n");
  assert.equal(isExecutable(script), false);
  fs.chmodSync(script, 0o755);
  assert.equal(isExecutable(script), true);
  assert.equal(isExecutable(dir), false);
  fs.rmSync(dir, { recursive: true });
});
