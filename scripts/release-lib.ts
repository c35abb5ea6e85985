// Where coder is published and what its release assets are called: the one place the
// release scripts (npm packages, Homebrew formula) and the installer tests take names from.
// install.sh, install.ps1 and README.md repeat GITHUB_REPO (they cannot import it);
// tests/install-packaging.test.ts fails until every copy agrees.

/** The GitHub repository (owner/name) that publishes coder's releases. Change it here first. */
export const GITHUB_REPO = "coder-dev/coder";

/** The npm wrapper package; each platform package is named `${NPM_PACKAGE}-<os>-<arch>[-musl]`. */
export const NPM_PACKAGE = "@coder-dev/coder";

/** The GitHub releases download base: `${RELEASES_BASE}/v<version>/<asset>`. */
export const RELEASES_BASE = `https://github.com/${GITHUB_REPO}/releases/download`;

/** One release platform, as its Bun target names it and as npm's `os`/`cpu`/`libc` fields do. */
export interface ReleasePlatform {
  /** The asset-name suffix: `linux-x64-musl`, `darwin-arm64`, `windows-x64`. */
  suffix: string;
  os: "linux" | "darwin" | "windows";
  arch: "x64" | "arm64";
  musl: boolean;
  /** `.exe` on Windows, empty elsewhere. */
  exe: string;
}

/** The platform of a Bun compile target such as `bun-linux-arm64-musl`. */
export function releasePlatform(target: string): ReleasePlatform {
  const suffix = target.replace(/^bun-/, "");
  const match = /^(linux|darwin|windows)-(x64|arm64)(-musl)?$/.exec(suffix);
  if (!match) throw new Error(`unknown release target ${target}: expected bun-<linux|darwin|windows>-<x64|arm64>[-musl]`);
  const os = match[1] as ReleasePlatform["os"];
  return { suffix, os, arch: match[2] as ReleasePlatform["arch"], musl: Boolean(match[3]), exe: os === "windows" ? ".exe" : "" };
}

/** `coder-<version>-<os>-<arch>[-musl][.exe]`: the name of a release binary. */
export function assetName(version: string, target: string): string {
  const platform = releasePlatform(target);
  return `coder-${version}-${platform.suffix}${platform.exe}`;
}

/** Parse SHA256SUMS text (`<hex>  <name>` per line) into name → lowercase hex. */
export function parseSha256Sums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    const match = /^([0-9a-fA-F]{64}) [ *](\S+)$/.exec(line.trim());
    if (!match) throw new Error(`SHA256SUMS line ${index + 1} is not "<sha256>  <file>": ${line}`);
    sums.set(match[2]!, match[1]!.toLowerCase());
  }
  return sums;
}

/**
 * Replace each `{{KEY}}` in a packaging template with values[KEY]; a marker without a value,
 * or a value no marker uses, is an error (so a template and its filler cannot drift apart).
 */
export function fillTemplate(name: string, text: string, values: Record<string, string>): string {
  const used = new Set<string>();
  const filled = text.replace(/\{\{([A-Z0-9_]+)\}\}/g, (_, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`${name}: no value for {{${key}}}`);
    used.add(key);
    return value;
  });
  const unused = Object.keys(values).filter((key) => !used.has(key));
  if (unused.length > 0) throw new Error(`${name}: the template has no {{${unused.join("}}, {{")}}}`);
  return filled;
}

/** The value after `name` in the command line (`--from dist/release`), or undefined when absent. */
export function argvOption(name: string, argv: string[] = process.argv): string | undefined {
  const index = argv.indexOf(name);
  if (index < 0) return undefined;
  const value = argv[index + 1];
  if (!value || value.startsWith("--")) throw new Error(`${name} needs a value`);
  return value;
}
