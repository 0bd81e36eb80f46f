// Fetching an image for an install or an upgrade: from a URL (tried again for a while, the
// network may still be coming up) or the client's upload, streamed through the signature and
// checksum checks into a stage directory.
import fs from 'node:fs';
import { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { verifyUpgradeImage } from '../../install/image.ts';
import { trustBundledRootsFor } from '../../lib/bundled-roots.ts';
import { ApiError } from '../api/common.ts';
import type { LifecycleContext } from './context.ts';

const FETCH_ATTEMPTS = 20;
const FETCH_RETRY_MS = 3000;

/** Streams an image (URL, or the client's upload) through verification into `stage`. */
export async function fetchVerified(ctx: LifecycleContext, url: string, upload: AsyncIterable<Buffer> | undefined, size: number, stage: string, report: (s: string, m: string, d?: number, t?: number) => void, signal: AbortSignal) {
  let source: AsyncIterable<Buffer | Uint8Array>;
  let total = size;
  let what: string;
  if (url) {
    if (!/^https?:\/\//.test(url)) throw new ApiError(grpc.status.INVALID_ARGUMENT, `image ${JSON.stringify(url)}: only http:// and https:// URLs can be fetched by the node (a local file is sent by bronzectl)`);
    // The network may still be coming up (an install at boot starts with the services):
    // a connection that fails is tried again for a while.
    let res: Response | undefined;
    for (let attempt = 1; !res; attempt++) {
      try {
        trustBundledRootsFor(url);
        res = await fetch(url, { signal });
      } catch (err) {
        const why = (err as { cause?: Error }).cause?.message ?? (err as Error).message;
        if (signal.aborted || attempt >= FETCH_ATTEMPTS) throw new ApiError(grpc.status.UNAVAILABLE, `fetching ${url}: ${why}`);
        report('download', `${url}: ${why}; trying again (${attempt}/${FETCH_ATTEMPTS})`);
        await new Promise((r) => setTimeout(r, FETCH_RETRY_MS));
      }
    }
    if (!res.ok || !res.body) throw new ApiError(grpc.status.UNAVAILABLE, `fetching ${url}: HTTP ${res.status} ${res.statusText}`);
    total = Number(res.headers.get('content-length') ?? 0);
    source = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
    what = 'download';
  } else {
    if (!upload) throw new ApiError(grpc.status.INVALID_ARGUMENT, 'no image: give a URL or send the image');
    source = upload;
    what = 'receive';
  }
  const trustedKeyFile = ctx.o.trustedKeyFile ?? '/usr/share/bronze/signing-key.pub';
  let trustedKeyPem: Buffer;
  try {
    trustedKeyPem = fs.readFileSync(trustedKeyFile);
  } catch {
    throw new ApiError(grpc.status.FAILED_PRECONDITION, `this node has no trusted signing key (${trustedKeyFile}): it cannot verify images`);
  }
  fs.rmSync(stage, { recursive: true, force: true });
  let lastPct = -1;
  const sourceName = url || `${size} bytes from the client`;
  report(what, sourceName, 0, total);
  const verified = await verifyUpgradeImage(source, {
    trustedKeyPem,
    stageDir: stage,
    maxBytes: 1 << 30,
    onProgress: (n) => {
      const pct = total ? Math.floor((n * 10) / total) : -1;
      if (pct !== lastPct) {
        lastPct = pct;
        report(what, sourceName, n, total);
      }
    },
  });
  report('verify', `signature and checksums good: Bronze ${verified.manifest.version} (${verified.manifest.arch})`);
  return verified;
}
