// Where machined finds its machine configuration at boot, in order: the kernel argument
// `bronze.config.inline=<base64>`, then `bronze.config=<http(s) url>` (fetched with retries;
// `${uuid}` and `${mac}` are replaced by the machine's SMBIOS UUID and its first physical
// link's MAC address). Logs, errors and the source reported name the URL as the kernel argument
// wrote it, `${uuid}` and all: the SMBIOS UUID is what a nodeID disk key is made of, so it is
// never logged (docs/security.md).
// A configuration kept in STATE comes before both (src/machined/node-config.ts).
import type { Logger } from '../../lib/log.ts';
import type { Cmdline } from '../cmdline.ts';
import { physicalLinks, smbiosUuid } from '../../lib/hostname.ts';
import { trustBundledRootsFor } from '../../lib/bundled-roots.ts';

export interface ConfigText {
  text: string;
  source: string;
}

export class ConfigSourceError extends Error {}

export function substitute(url: string, vars: { uuid: string; mac: string }): string {
  return url.replace(/\$\{(uuid|mac)\}/g, (_, k: 'uuid' | 'mac') => encodeURIComponent(vars[k]));
}

export interface FetchOptions {
  attempts?: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
  timeoutMs?: number;
}

/** Fetches `url`, with retries; logs and errors name it as `shown` (default: the URL itself). */
export async function fetchConfig(url: string, log: Logger, o: FetchOptions = {}, shown = url): Promise<string> {
  const attempts = o.attempts ?? 20;
  let delay = o.firstDelayMs ?? 500;
  let last = '';
  for (let i = 1; i <= attempts; i++) {
    try {
      trustBundledRootsFor(url);
      const res = await fetch(url, { signal: AbortSignal.timeout(o.timeoutMs ?? 10_000) });
      if (res.ok) return await res.text();
      last = `HTTP ${res.status} ${res.statusText}`;
      if (res.status >= 400 && res.status < 500 && res.status !== 404 && res.status !== 429) break; // will not get better
    } catch (err) {
      last = (err as Error).cause ? `${(err as Error).message}: ${((err as Error).cause as Error).message}` : (err as Error).message;
      // fetch quotes a URL it cannot parse: as shown, not as fetched.
      last = last.split(url).join(shown);
    }
    if (i < attempts) {
      log.warn(`config ${shown}: attempt ${i}/${attempts} failed (${last}); retrying in ${delay} ms`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, o.maxDelayMs ?? 10_000);
    }
  }
  throw new ConfigSourceError(`config ${shown}: ${last}`);
}

export async function acquireConfig(cmdline: Cmdline, log: Logger, o: FetchOptions & { sysRoot?: string } = {}): Promise<ConfigText | undefined> {
  const inline = cmdline.get('bronze.config.inline');
  if (inline) {
    const text = Buffer.from(inline, 'base64').toString('utf8');
    if (!text.trim()) throw new ConfigSourceError('bronze.config.inline: not base64 of a configuration');
    return { text, source: 'kernel argument bronze.config.inline' };
  }
  const url = cmdline.get('bronze.config');
  if (url) {
    if (!/^https?:\/\//.test(url)) throw new ConfigSourceError(`bronze.config=${url}: only http:// and https:// URLs are supported`);
    // ${mac}: the first physical link's (never a bond or bridge the kernel or networkd made).
    const real = substitute(url, { uuid: smbiosUuid(o.sysRoot) ?? '', mac: physicalLinks(o.sysRoot)[0]?.mac ?? '' });
    // The source as written (the MAC is no secret, but one rule for both keeps it simple).
    return { text: await fetchConfig(real, log, o, url), source: url };
  }
  return undefined;
}
