// int64 fields as decimal strings without long.js's division where a double holds them exactly.
//
// protobufjs decodes an int64 field into a long.js Long, and toObject with `longs: String` (the
// conversion proto-loader and Bronze use) turns it into text with Long's toString, which
// divides by 10^6 in 64-bit arithmetic, a chunk of six digits at a time. Without long.js's
// WebAssembly module (image-builder/long-without-wasm.ts) that division is JavaScript: under
// qemu-x86_64 a Timestamp's seconds took 0.25 ms to convert, against 1 µs for String() of the
// same number, and every resource a daemon reads carries two Timestamps. A value within
// ±(2^53 - 1) is exactly the double Long's toNumber makes, so String() of that double is the same
// text; larger values (uint64 ids, hashes) still go through Long's own toString.

/** The part of long.js's Long class this touches. */
export interface LongClass {
  prototype: { toString(radix?: number): string; toNumber(): number };
}

const PATCHED = Symbol.for('bronze.fastLongToString');

/** Makes Long's decimal toString take the shortcut above; idempotent, a no-op without long.js. */
export function fastLongToString(Long: LongClass | null | undefined): void {
  if (!Long) return;
  const proto = Long.prototype as LongClass['prototype'] & { [PATCHED]?: true };
  if (proto[PATCHED]) return;
  const slow = proto.toString;
  proto.toString = function (this: LongClass['prototype'], radix?: number): string {
    if (radix === undefined || radix === 10) {
      // toNumber rounds a value beyond 2^53 to a double of at least 2^53 (rounding is
      // monotonic and 2^53 is a double), so a safe integer here is the exact value.
      const n = this.toNumber();
      if (Number.isSafeInteger(n)) return String(n);
    }
    return slow.call(this, radix);
  };
  proto[PATCHED] = true;
}
