// time.TimeService (Talos-compatible): Time queries the configured server, TimeCheck the one
// named in the request (or the configured one when it is empty). Each answers with the node's
// local time when the reply arrived and the server's time at that moment.
import os from 'node:os';
import * as grpc from '@grpc/grpc-js';
import { BadServerError, type Sample } from './sntp.ts';
import { NoServerError } from './sync.ts';

export interface TimeChecker {
  check(server?: string): Promise<Sample>;
}

interface ProtoTimestamp {
  seconds: string;
  nanos: number;
}

export function toTimestamp(ms: number): ProtoTimestamp {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.min(999_999_999, Math.max(0, Math.round((ms - seconds * 1000) * 1e6)));
  return { seconds: String(seconds), nanos };
}

export function timeReply(sample: Sample, hostname = os.hostname()) {
  return {
    messages: [
      {
        metadata: { hostname },
        server: sample.server,
        localtime: toTimestamp(sample.localMs),
        remotetime: toTimestamp(sample.remoteMs),
      },
    ],
  };
}

type Unary = (call: grpc.ServerUnaryCall<{ server?: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => void;

/** The implementation to pass to serveDaemon as { service: 'time.TimeService', impl }. */
export function timeService(checker: TimeChecker): { Time: Unary; TimeCheck: Unary } {
  const answer = (server: string | undefined, cb: grpc.sendUnaryData<unknown>) => {
    checker.check(server).then(
      (s) => cb(null, timeReply(s)),
      (err: Error) =>
        cb({
          code:
            err instanceof NoServerError
              ? grpc.status.FAILED_PRECONDITION
              : err instanceof BadServerError
                ? grpc.status.INVALID_ARGUMENT
                : grpc.status.UNAVAILABLE,
          details: err.message,
        } as grpc.ServiceError),
    );
  };
  return {
    Time: (_call, cb) => answer(undefined, cb),
    TimeCheck: (call, cb) => answer(call.request?.server || undefined, cb),
  };
}
