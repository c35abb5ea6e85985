// Fill the npm packages from a release directory (dist/release by default): one package per
// platform holding that platform's binary (checked against SHA256SUMS first), and the
// wrapper package, whose `coder` shim runs whichever platform package npm installed (they
// are its optionalDependencies, each limited by os/cpu/libc). Publish the platform packages
// before the wrapper:
//   bun scripts/package-npm.ts [--from dist/release] [--out dist/npm] [--only linux-x64,...]
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { RELEASE_TARGETS } from "./build.ts";
import { GITHUB_REPO, argvOption, NPM_PACKAGE, assetName, fillTemplate, parseSha256Sums, releasePlatform, type ReleasePlatform } from "./release-lib.ts";

const ROOT = join(import.meta.dir, "..");

export interface NpmPackagesOptions {
  /** The release directory: the binaries and SHA256SUMS. */
  from: string;
  /** Where the package folders go (emptied first). */
  out: string;
  /** Platform suffixes to fill (default: every release target); the wrapper always lists all. */
  only?: string[];
}

/** The folders written: the platform packages first, the wrapper last (the order to publish in). */
export function fillNpmPackages(options: NpmPackagesOptions): string[] {
  const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string; license: string };
  const version = root.version;
  const sumsFile = join(options.from, "SHA256SUMS");
  if (!existsSync(sumsFile)) throw new Error(`${sumsFile} is missing: run \`npm run release\` first`);
  const sums = parseSha256Sums(readFileSync(sumsFile, "utf8"));
  const platforms = RELEASE_TARGETS.map(releasePlatform);
  const known = new Set(platforms.map((platform) => platform.suffix));
  for (const suffix of options.only ?? []) {
    if (!known.has(suffix)) throw new Error(`--only ${suffix}: not a release platform (one of ${[...known].join(", ")})`);
  }
  const chosen = platforms.filter((platform) => !options.only || options.only.includes(platform.suffix));

  rmSync(options.out, { recursive: true, force: true });
  const common = {
    version,
    license: root.license,
    homepage: `https://github.com/${GITHUB_REPO}#readme`,
    repository: { type: "git", url: `git+https://github.com/${GITHUB_REPO}.git` },
  };
  const written: string[] = [];
  for (const platform of chosen) {
    const asset = assetName(version, `bun-${platform.suffix}`);
    const source = join(options.from, asset);
    const expected = sums.get(asset);
    if (!expected) throw new Error(`${asset} is not listed in ${sumsFile}`);
    if (!existsSync(source)) throw new Error(`${source} is missing (SHA256SUMS lists it)`);
    const actual = new Bun.CryptoHasher("sha256").update(readFileSync(source)).digest("hex");
    if (actual !== expected) throw new Error(`${source} does not match SHA256SUMS (sha256 ${actual}, expected ${expected})`);
    const dir = join(options.out, `coder-${platform.suffix}`);
    const binary = join(dir, "bin", `coder${platform.exe}`);
    mkdirSync(join(dir, "bin"), { recursive: true });
    copyFileSync(source, binary);
    chmodSync(binary, 0o755);
    writeJson(join(dir, "package.json"), {
      name: `${NPM_PACKAGE}-${platform.suffix}`,
      ...common,
      description: `The coder binary for ${describe(platform)}. Install ${NPM_PACKAGE}, which picks this package on such a machine.`,
      os: [platform.os === "windows" ? "win32" : platform.os],
      cpu: [platform.arch],
      ...(platform.os === "linux" ? { libc: [platform.musl ? "musl" : "glibc"] } : {}),
      files: ["bin"],
      preferUnplugged: true,
    });
    writeFileSync(
      join(dir, "README.md"),
      `# ${NPM_PACKAGE}-${platform.suffix}\n\nThe \`coder\` ${version} binary for ${describe(platform)}.\n` +
        `Install [${NPM_PACKAGE}](https://www.npmjs.com/package/${NPM_PACKAGE}) instead: it depends on this package and runs it.\n`,
    );
    written.push(dir);
  }

  const wrapperDir = join(options.out, "coder");
  const template = join(ROOT, "packaging", "npm", "coder");
  mkdirSync(join(wrapperDir, "bin"), { recursive: true });
  copyFileSync(join(template, "bin", "coder.js"), join(wrapperDir, "bin", "coder.js"));
  chmodSync(join(wrapperDir, "bin", "coder.js"), 0o755);
  const readme = join(template, "README.md");
  writeFileSync(
    join(wrapperDir, "README.md"),
    fillTemplate(readme, readFileSync(readme, "utf8"), { NPM_PACKAGE, GITHUB_REPO }),
  );
  writeJson(join(wrapperDir, "package.json"), {
    name: NPM_PACKAGE,
    ...common,
    description: "coder, an AI pair programmer for the terminal: the native binary for this machine, run by a small shim.",
    bin: { coder: "bin/coder.js" },
    files: ["bin"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(platforms.map((platform) => [`${NPM_PACKAGE}-${platform.suffix}`, version])),
  });
  written.push(wrapperDir);
  return written;
}

function describe(platform: ReleasePlatform): string {
  const os = { linux: "Linux", darwin: "macOS", windows: "Windows" }[platform.os];
  return `${os} ${platform.arch}${platform.os === "linux" ? (platform.musl ? " (musl)" : " (glibc)") : ""}`;
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

if (import.meta.main) {
  try {
    const only = argvOption("--only");
    const written = fillNpmPackages({
      from: argvOption("--from") ?? join(ROOT, "dist", "release"),
      out: argvOption("--out") ?? join(ROOT, "dist", "npm"),
      ...(only ? { only: only.split(",") } : {}),
    });
    for (const dir of written) console.log(`filled ${relative(process.cwd(), dir) || "."}`);
  } catch (error) {
    console.error(`package-npm: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
