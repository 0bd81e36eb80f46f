// Health check of a daemon over its unix socket (grpc.health.v1.Health/Check), used by
// machined's supervisor. One client per daemon, reused across checks.
import fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { serviceClient } from '../contract/protos.ts';
import { LOCAL_CHANNEL_OPTIONS } from './local-channel.ts';

export function healthChecker(socket: string, timeoutMs = 2000): { check: () => Promise<void>; close: () => void } {
  const Health = serviceClient('grpc.health.v1.Health');
  let client: grpc.Client | undefined;
  const get = () => (client ??= new Health(`unix:${socket}`, grpc.credentials.createInsecure(), LOCAL_CHANNEL_OPTIONS));
  return {
    check: () =>
      new Promise<void>((resolve, reject) => {
        // A daemon still starting has no socket yet: say so without a connection attempt, whose
        // failure would only put the channel into its reconnect backoff.
        if (!fs.existsSync(socket)) return reject(new Error(`health check: nothing listens on ${socket}`));
        const c = get() as unknown as { Check: (req: object, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: { status: string }) => void) => void };
        c.Check({ service: '' }, { deadline: Date.now() + timeoutMs }, (err, res) => {
          if (err) {
            // The daemon has not made its socket yet, or it is gone: say so, not gRPC's
            // "No connection established. Last error: connect ENOENT ... Resolution note: ".
            const details = (err.details || err.message).replace(/\.?\s*Resolution note:\s*$/, '');
            if (err.code === grpc.status.UNAVAILABLE && /ENOENT|ECONNREFUSED/.test(details)) return reject(new Error(`health check: nothing listens on ${socket}`));
            return reject(new Error(`health check: ${details}`));
          }
          if (res?.status !== 'SERVING') return reject(new Error(`health check: ${res?.status ?? 'no status'}`));
          resolve();
        });
      }),
    close: () => {
      client?.close();
      client = undefined;
    },
  };
}
