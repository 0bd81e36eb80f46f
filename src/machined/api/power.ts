// Reboot and Shutdown: reply first (with the actor id the sequence's events will carry), then
// ask machined for the sequence, so that the reply reaches the client before services (apid
// among them) are stopped.

import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { toServiceError } from './common.ts';

export type PowerSequence = 'reboot' | 'shutdown';

/** machined's sequence entry point. actorId ties the sequence's events to the request. */
export type RequestSequence = (sequence: PowerSequence, reason: string, actorId: string) => void | Promise<void>;

/** Refuses (throws an ApiError) a power request that must not happen now, e.g. one that would break etcd quorum. */
export type PowerCheck = (sequence: PowerSequence, req: { mode?: string | number; force?: boolean }) => Promise<void> | void;

export interface PowerOptions {
  requestSequence: RequestSequence;
  check?: PowerCheck;
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
      const request = call.request ?? {};
      Promise.resolve()
        .then(() => opts.check?.(sequence, request))
        .then(
          () => {
            const actorId = randomUUID();
            const why = reason(request);
            callback(null, { messages: [{ actor_id: actorId }] });
            setTimeout(() => {
              Promise.resolve()
                .then(() => opts.requestSequence(sequence, why, actorId))
                .catch((err: unknown) => opts.onError?.(err));
            }, delay);
          },
          (err: unknown) => callback(toServiceError(err)),
        );
    };
  return {
    Reboot: handler('reboot', (req: { mode?: string | number }) =>
      req.mode === 'POWERCYCLE' || req.mode === 1 ? 'API Reboot request (powercycle)' : req.mode === 'FORCE' || req.mode === 2 ? 'API Reboot request (force)' : 'API Reboot request',
    ),
    Shutdown: handler('shutdown', (req: { force?: boolean }) => (req.force ? 'API Shutdown request (force)' : 'API Shutdown request')),
  };
}
