// Some npm grammars (tree-sitter-dart 1.0.0) were built by an old Emscripten whose
// side modules carry a legacy "dylink" section; web-tree-sitter ≥ 0.26 reads only
// "dylink.0". The payload is the same facts, so we rewrite that one section.

function readLeb(bytes: Uint8Array, at: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  let pos = at;
  for (;;) {
    const byte = bytes[pos++]!;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, pos];
  }
}

function leb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return out;
}

/** Returns the module with a legacy "dylink" section rewritten as "dylink.0"; other modules unchanged. */
export function upgradeLegacyDylink(wasm: Uint8Array): Uint8Array {
  if (wasm.length < 12 || wasm[8] !== 0) return wasm;
  const [sectionSize, payloadStart] = readLeb(wasm, 9);
  const [nameLength, nameStart] = readLeb(wasm, payloadStart);
  const name = new TextDecoder().decode(wasm.subarray(nameStart, nameStart + nameLength));
  if (name !== "dylink") return wasm;
  const sectionEnd = payloadStart + sectionSize;
  let pos = nameStart + nameLength;
  const memInfo: number[] = [];
  for (let i = 0; i < 4; i++) {
    const [v, next] = readLeb(wasm, pos);
    memInfo.push(...leb(v));
    pos = next;
  }
  const needed = Array.from(wasm.subarray(pos, sectionEnd));
  const newName = Array.from(new TextEncoder().encode("dylink.0"));
  const body = [...leb(newName.length), ...newName, 1, ...leb(memInfo.length), ...memInfo];
  const [neededCount] = readLeb(wasm, pos);
  if (neededCount > 0) body.push(2, ...leb(needed.length), ...needed);
  const section = [0, ...leb(body.length), ...body];
  const out = new Uint8Array(8 + section.length + (wasm.length - sectionEnd));
  out.set(wasm.subarray(0, 8), 0);
  out.set(section, 8);
  out.set(wasm.subarray(sectionEnd), 8 + section.length);
  return out;
}
