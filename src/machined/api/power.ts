// Reboot and Shutdown: reply first (with the actor id the sequence's events will carry), then
// ask machined for the sequence, so that the reply reaches the client before services (apid
// among them) are stopped.

import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';

export type PowerSequence = 'reboot' | 'shutdown';

/** machined's sequence entry point. actorId ties the sequence's events to the request. */
export type RequestSequence = (sequence: PowerSequence, reason: string, actorId: string) => void | Promise<void>;

export interface PowerOptions {
  requestSequence: RequestSequence;
  /** Where a failing request is reported. */
  onError?: (err: unknown) => void;
  /** Delay between sending the reply and requesting the sequence, ms. Default 100. */
  afterReplyMs?: number;
}

export function powerHandlers(opts: PowerOptions): Record<string, grpc.handleUnaryCall<any, any>> {
  const delay = opts.afterReplyMs ?? 100;
  const handler =
    (sequence: PowerSequence, reason: (req: any) => string): grpc.handleUnaryCall<any, any> =>
    (call, callback) => {
      const actorId = randomUUID();
      const why = reason(call.request ?? {});
      callback(null, { messages: [{ actor_id: actorId }] });
      setTimeout(() => {
        Promise.resolve()
          .then(() => opts.requestSequence(sequence, why, actorId))
          .catch((err: unknown) => opts.onError?.(err));
      }, delay);
    };
  return {
    Reboot: handler('reboot', (req: { mode?: string | number }) =>
      req.mode === 'POWERCYCLE' || req.mode === 1 ? 'API Reboot request (powercycle)' : 'API Reboot request',
    ),
    Shutdown: handler('shutdown', (req: { force?: boolean }) => (req.force ? 'API Shutdown request (force)' : 'API Shutdown request')),
  };
}
