// apid's connection to machined, made before the first call needs it. machined answers the
// maintenance API and most of the node's calls; apid starts before machined serves
// (machined/early.ts), so without this the first caller's call paid for the connection and
// apid's first HTTP/2 request to a daemon. Under QEMU/TCG the first maintenance read spent
// 0.67 s of its 0.93 s waiting on machined (later reads 0.02-0.1 s); with the connection made
// early the whole first read took 0.82 s against 0.91-1.0 s (single boots): most of that wait
// is machined itself, busy with the daemons' start.
import fs from 'node:fs';
import type { LocalChannel } from './local.ts';

/** The standard health check: what is called over the connection to see that machined answers. */
export const HEALTH_CHECK = '/grpc.health.v1.Health/Check';

/**
 * Makes one health check over `channel` (machined's): at once, and again every `everyMs` while
 * machined does not answer yet, for at most `forMs`, or until `closing()`. Resolves true once
 * machined has answered.
 */
export async function connectMachined(channel: LocalChannel, closing: () => boolean, { everyMs = 100, forMs = 60_000 }: { everyMs?: number; forMs?: number } = {}): Promise<boolean> {
  for (const end = Date.now() + forMs; Date.now() < end; ) {
    if (closing()) return false;
    try {
      // Until machined has made its socket, only the file is looked for: a connection attempt
      // costs far more under emulation than a stat.
      if (fs.existsSync(channel.socket)) {
        await channel.unary(HEALTH_CHECK, Buffer.alloc(0), {}, Date.now() + 5000);
        return true;
      }
    } catch {
      // not answering yet
    }
    await new Promise((r) => setTimeout(r, everyMs).unref());
  }
  return false;
}
