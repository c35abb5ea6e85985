// Fill the Homebrew formula template (packaging/homebrew/coder.rb) for this version: each
// macOS and Linux (glibc) binary's release URL and its sha256 from the release's SHA256SUMS.
//   bun scripts/package-homebrew.ts [--sums dist/release/SHA256SUMS] [--out dist/homebrew/coder.rb]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { GITHUB_REPO, argvOption, RELEASES_BASE, assetName, fillTemplate, parseSha256Sums } from "./release-lib.ts";

const ROOT = join(import.meta.dir, "..");
export const FORMULA_TEMPLATE = join(ROOT, "packaging", "homebrew", "coder.rb");
/** The tap users add: `brew install <owner>/tap/coder` reads github.com/<owner>/homebrew-tap. */
export const HOMEBREW_TAP = `${GITHUB_REPO.split("/")[0]}/tap`;

/** The formula text for the version in package.json, checked against the given SHA256SUMS text. */
export function homebrewFormula(sumsText: string): string {
  const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string; license: string };
  const sums = parseSha256Sums(sumsText);
  const values: Record<string, string> = {
    TAP: HOMEBREW_TAP,
    GITHUB_REPO,
    VERSION: root.version,
    LICENSE: root.license,
  };
  for (const suffix of ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64"]) {
    const asset = assetName(root.version, `bun-${suffix}`);
    const sha = sums.get(asset);
    if (!sha) throw new Error(`SHA256SUMS has no ${asset}: the formula needs every macOS and Linux (glibc) binary`);
    const key = suffix.toUpperCase().replace("-", "_");
    values[`URL_${key}`] = `${RELEASES_BASE}/v${root.version}/${asset}`;
    values[`SHA256_${key}`] = sha;
  }
  return fillTemplate(FORMULA_TEMPLATE, readFileSync(FORMULA_TEMPLATE, "utf8"), values);
}

if (import.meta.main) {
  try {
    const sums = argvOption("--sums") ?? join(ROOT, "dist", "release", "SHA256SUMS");
    const out = argvOption("--out") ?? join(ROOT, "dist", "homebrew", "coder.rb");
    if (!existsSync(sums)) throw new Error(`${sums} is missing: run \`npm run release\` first`);
    const formula = homebrewFormula(readFileSync(sums, "utf8"));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, formula);
    console.log(`wrote ${relative(process.cwd(), out)} (tap ${HOMEBREW_TAP})`);
  } catch (error) {
    console.error(`package-homebrew: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
