#!/usr/bin/env node
// The `coder` command of the npm package: it runs the native coder binary from the platform
// package npm installed beside this one (an optionalDependency whose os/cpu/libc match this
// machine), passing the arguments, the terminal and the exit status through.
"use strict";

const { spawn } = require("node:child_process");
const { accessSync, chmodSync, constants } = require("node:fs");
const { dirname, join } = require("node:path");
const wrapper = require("../package.json");

function fail(message) {
  process.stderr.write(`coder: ${message}\n`);
  process.exit(1);
}

function isMusl() {
  try {
    if (process.report) process.report.excludeNetwork = true;
    const header = process.report && process.report.getReport().header;
    return Boolean(header) && !header.glibcVersionRuntime;
  } catch {
    return false;
  }
}

/** The platform suffix of the package to run: linux-x64, linux-arm64-musl, darwin-arm64, windows-x64. */
function platformSuffix() {
  const os = { linux: "linux", darwin: "darwin", win32: "windows" }[process.platform];
  if (!os) fail(`no coder build for ${process.platform}; builds exist for Linux, macOS and Windows`);
  // Windows on Arm runs the x64 build under its emulation.
  const arch = os === "windows" && process.arch === "arm64" ? "x64" : process.arch;
  if (arch !== "x64" && arch !== "arm64") fail(`no coder build for ${arch} processors; builds exist for x64 and arm64`);
  return `${os}-${arch}${os === "linux" && isMusl() ? "-musl" : ""}`;
}

function binaryPath() {
  const suffix = platformSuffix();
  const name = `${wrapper.name}-${suffix}`;
  let root;
  try {
    root = dirname(require.resolve(`${name}/package.json`));
  } catch {
    fail(
      `the package ${name} (coder's binary for ${suffix}) is not installed. ` +
        `npm skips it when optional dependencies are omitted: reinstall ${wrapper.name} without --omit=optional or --no-optional.`,
    );
  }
  const binary = join(root, "bin", suffix.startsWith("windows") ? "coder.exe" : "coder");
  if (process.platform !== "win32") {
    try {
      accessSync(binary, constants.X_OK);
    } catch {
      // Some package managers unpack without the executable bit; restore it when we may.
      try {
        chmodSync(binary, 0o755);
      } catch {}
    }
  }
  return binary;
}

const binary = binaryPath();
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// Ctrl-C and Ctrl-\ reach coder from the terminal directly (it handles them itself); the shim
// must only outlive them. A SIGTERM or SIGHUP sent to the shim alone is passed on.
process.on("SIGINT", () => {});
process.on("SIGQUIT", () => {});
for (const signal of ["SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on("error", (error) => fail(`could not run ${binary}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
