// A release server for the installer tests: dist/coder served from 127.0.0.1 as this machine's
// release asset, in GitHub's layout (<base>/v<version>/<asset>, with SHA256SUMS beside it, and
// the latest release at .../releases/latest/download/), plus variants for the failure cases.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { assetName, releasePlatform, type ReleasePlatform } from "../../scripts/release-lib.ts";
import { BIN, REPO, requireBinary } from "./kernel.ts";

export const VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;

function isMusl(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return process.platform === "linux" && !report?.header?.glibcVersionRuntime;
}

/** This machine's release platform, or null where no release build runs (install.sh covers Linux and macOS). */
export function hostPlatform(): ReleasePlatform | null {
  const os = { linux: "linux", darwin: "darwin" }[process.platform as string];
  if (!os || (process.arch !== "x64" && process.arch !== "arm64")) return null;
  return releasePlatform(`bun-${os}-${process.arch}${isMusl() ? "-musl" : ""}`);
}

export interface ReleaseServer {
  /** http://127.0.0.1:PORT */
  origin: string;
  /** The host's asset name, e.g. coder-0.1.0-linux-x64. */
  asset: string;
  /** sha256 of dist/coder. */
  sha256: string;
  /** Every path requested, in order. */
  requests: string[];
  stop(): void;
}

/**
 * Layouts served (each `<base>/v<VERSION>/{SHA256SUMS,<asset>}`):
 * - `/releases/download`: GitHub's, with the latest at `/releases/latest/download/SHA256SUMS`;
 * - `/mirror`: another base, with the latest at `/mirror/latest/SHA256SUMS`;
 * - `/tampered`: the asset's last byte changed, SHA256SUMS as released;
 * - `/other-platforms`: SHA256SUMS without this machine's asset.
 */
export function startReleaseServer(platform: ReleasePlatform): ReleaseServer {
  requireBinary();
  const binary = Bun.file(BIN);
  const bytes = readFileSync(BIN);
  const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  const asset = assetName(VERSION, `bun-${platform.suffix}`);
  const other = platform.suffix === "linux-x64" ? "linux-arm64" : "linux-x64";
  const sums = `${sha256}  ${asset}\n${"0".repeat(64)}  ${assetName(VERSION, `bun-${other}`)}\n`;
  // Same size, one byte changed (built in memory: a Blob of a file slice serves truncated here).
  const tampered = new Uint8Array(bytes);
  tampered[tampered.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
  const files = new Map<string, Blob | Uint8Array | string>([
    [`/releases/download/v${VERSION}/SHA256SUMS`, sums],
    [`/releases/download/v${VERSION}/${asset}`, binary],
    [`/releases/latest/download/SHA256SUMS`, sums],
    [`/releases/latest/download/${asset}`, binary],
    [`/mirror/v${VERSION}/SHA256SUMS`, sums],
    [`/mirror/v${VERSION}/${asset}`, binary],
    [`/mirror/latest/SHA256SUMS`, sums],
    [`/tampered/v${VERSION}/SHA256SUMS`, sums],
    [`/tampered/v${VERSION}/${asset}`, tampered],
    [`/other-platforms/v${VERSION}/SHA256SUMS`, `${"0".repeat(64)}  ${assetName(VERSION, `bun-${other}`)}\n`],
  ]);
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      requests.push(path);
      const body = files.get(path);
      return body === undefined ? new Response("Not Found", { status: 404 }) : new Response(body);
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, asset, sha256, requests, stop: () => server.stop(true) };
}
