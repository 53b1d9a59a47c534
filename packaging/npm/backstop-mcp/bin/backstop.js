#!/usr/bin/env node
// The `backstop` command of the npm package backstop-mcp: finds the native binary that
// npm installed for this platform (one optional dependency per platform, each with its
// `os` and `cpu`, so npm installs only the matching one) and runs it with this
// process's arguments and stdio. Signals are passed on, and the binary's exit status
// (or the signal that ended it) becomes this process's.
"use strict";

const { spawn } = require("node:child_process");

// `${process.platform}-${process.arch}` -> the package that carries that binary.
const PLATFORM_PACKAGES = {
  "linux-x64": "backstop-mcp-linux-x64",
  "linux-arm64": "backstop-mcp-linux-arm64",
  "darwin-x64": "backstop-mcp-darwin-x64",
  "darwin-arm64": "backstop-mcp-darwin-arm64",
  "win32-x64": "backstop-mcp-win32-x64",
};

function binaryPath() {
  if (process.env.BACKSTOP_BINARY) return process.env.BACKSTOP_BINARY;
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[platform];
  if (!pkg) {
    fail(`no prebuilt binary for ${platform}; build one with cargo (see the README) ` +
      "and set BACKSTOP_BINARY to its path");
  }
  const exe = process.platform === "win32" ? "backstop.exe" : "backstop";
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    fail(`the package ${pkg} (this platform's binary) is not installed: ` +
      "it is an optional dependency, so install without --omit=optional / --no-optional");
  }
}

function fail(message) {
  process.stderr.write(`backstop (npm launcher): ${message}\n`);
  process.exit(127);
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const signal of forwarded) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => fail(`cannot start the binary: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    for (const name of forwarded) process.removeAllListeners(name);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
