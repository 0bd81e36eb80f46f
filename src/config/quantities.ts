// The quantities of a ContainerConfig, read as Talos reads them: sizes with go-humanize's
// ParseBytes (`512MiB`, `1.5 GB`, `64M`, `1,024 KiB`), CPU limits in millicores only (`1500m`).
// Talos refuses a bare core count ("2") rather than guess whether it means cores or millicores.

/** go-humanize's unit table: SI (k = 1000) and IEC (ki, kib = 1024), case-insensitive. */
const UNITS: Readonly<Record<string, number>> = (() => {
  const t: Record<string, number> = { '': 1, b: 1 };
  ['k', 'm', 'g', 't', 'p', 'e'].forEach((p, i) => {
    t[p] = t[`${p}b`] = 1000 ** (i + 1);
    t[`${p}i`] = t[`${p}ib`] = 1024 ** (i + 1);
  });
  return t;
})();

/** Bytes of a size as go-humanize's ParseBytes reads it, or the reason it is not one. */
export function parseHumanBytes(text: string): number | string {
  const digits = /^[0-9.,]*/.exec(text)![0];
  const unit = text.slice(digits.length).trim().toLowerCase();
  const number = digits.replace(/,/g, '');
  if (number === '' || !/^(\d+\.?\d*|\.\d+)$/.test(number)) return `strconv.ParseFloat: parsing ${JSON.stringify(number)}: invalid syntax`;
  const factor = UNITS[unit];
  if (factor === undefined) return `unhandled size name: ${unit}`;
  const bytes = Number(number) * factor;
  if (bytes >= 2 ** 64) return 'too large';
  return Math.floor(bytes);
}

/** Millicores of a CPU limit (`1500m`), or Talos's message saying why not. */
export function parseMillicores(value: string): number | string {
  if (!value.endsWith('m')) return `limits.cpu ${JSON.stringify(value)} must be expressed in millicores, e.g. 1500m`;
  const digits = value.slice(0, -1);
  if (!/^\d+$/.test(digits) || !Number.isSafeInteger(Number(digits))) return `limits.cpu ${JSON.stringify(value)} is not a valid millicore quantity`;
  if (Number(digits) === 0) return `limits.cpu ${JSON.stringify(value)} must be greater than zero`;
  return Number(digits);
}
