// Two-way tables between the numbers the kernel (or Talos's enums) use and the names Talos's
// YAML shows, as data: the YAML form names a value, the proto codecs turn the name back into the
// number.

/** A two-way table: the text Talos's YAML shows for a number. */
export class NameTable {
  readonly #byNumber = new Map<number, string>();
  readonly #byName = new Map<string, number>();

  constructor(
    readonly what: string,
    entries: ReadonlyArray<readonly [number, string]>,
  ) {
    for (const [n, name] of entries) {
      if (!this.#byNumber.has(n)) this.#byNumber.set(n, name);
      this.#byName.set(name, n);
    }
  }

  /** The name of n; a number Talos does not name is shown as the number. */
  name(n: number): string {
    return this.#byNumber.get(n) ?? String(n);
  }

  /** The number of a name (or of a number written out); throws on anything else. */
  number(name: string): number {
    const n = this.#byName.get(name);
    if (n !== undefined) return n;
    if (/^\d+$/.test(name)) return Number(name);
    throw new Error(`unknown ${this.what} ${JSON.stringify(name)}`);
  }
}

/** Bit masks shown as their names joined by ',' (Talos's LinkFlags, AddressFlags, RouteFlags). */
export class FlagTable {
  constructor(
    readonly what: string,
    private readonly bits: ReadonlyArray<readonly [number, string]>,
  ) {}

  text(mask: number): string {
    return this.bits
      .filter(([bit]) => (mask & bit) === bit)
      .map(([, n]) => n)
      .join(',');
  }

  mask(text: string): number {
    let m = 0;
    for (const name of text.split(',').filter(Boolean)) {
      const bit = this.bits.find(([, n]) => n === name);
      if (!bit) throw new Error(`unknown ${this.what} ${JSON.stringify(name)}`);
      m |= bit[0];
    }
    return m >>> 0;
  }
}

