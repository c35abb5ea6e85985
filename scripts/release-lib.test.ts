import { describe, expect, test } from "bun:test";
import { RELEASE_TARGETS } from "./build.ts";
import { assetName, fillTemplate, parseSha256Sums, releasePlatform } from "./release-lib.ts";

describe("release names", () => {
  test("every release target has a platform and the asset name install.sh and install.ps1 build", () => {
    expect(RELEASE_TARGETS.map((target) => assetName("1.2.3", target))).toEqual([
      "coder-1.2.3-linux-x64",
      "coder-1.2.3-linux-arm64",
      "coder-1.2.3-linux-x64-musl",
      "coder-1.2.3-linux-arm64-musl",
      "coder-1.2.3-darwin-x64",
      "coder-1.2.3-darwin-arm64",
      "coder-1.2.3-windows-x64.exe",
    ]);
    expect(releasePlatform("bun-linux-arm64-musl")).toEqual({ suffix: "linux-arm64-musl", os: "linux", arch: "arm64", musl: true, exe: "" });
    expect(() => releasePlatform("bun-freebsd-x64")).toThrow("unknown release target bun-freebsd-x64");
  });

  test("SHA256SUMS lines in text and binary mode; a malformed line is named", () => {
    const hex = "Ab".repeat(32);
    expect(parseSha256Sums(`${hex}  coder-1-linux-x64\n${hex} *coder-1-windows-x64.exe\n\n`)).toEqual(
      new Map([
        ["coder-1-linux-x64", hex.toLowerCase()],
        ["coder-1-windows-x64.exe", hex.toLowerCase()],
      ]),
    );
    expect(() => parseSha256Sums(`${hex}  a\nnot a sum\n`)).toThrow('SHA256SUMS line 2 is not "<sha256>  <file>": not a sum');
  });

  test("a template and its values must match exactly", () => {
    expect(fillTemplate("t", "{{A}} and {{B}} and {{A}}", { A: "1", B: "2" })).toBe("1 and 2 and 1");
    expect(() => fillTemplate("t.rb", "{{A}} {{C}}", { A: "1" })).toThrow("t.rb: no value for {{C}}");
    expect(() => fillTemplate("t.rb", "{{A}}", { A: "1", B: "2", D: "4" })).toThrow("t.rb: the template has no {{B}}, {{D}}");
  });
});
