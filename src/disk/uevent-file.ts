// The KEY=VALUE `uevent` files under /sys (what coldplug reads, and what a kernel uevent
// message carries after its header).

/** A uevent key: what the kernel writes (letters, digits, underscores). */
export const UEVENT_KEY = /^[A-Za-z0-9_]+$/;

/** The contents of a /sys/.../uevent file (KEY=VALUE lines) as an environment. */
export function parseUeventFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq);
    if (UEVENT_KEY.test(key)) env[key] = line.slice(eq + 1);
  }
  return env;
}
