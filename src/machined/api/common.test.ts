import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { UnknownResourceTypeError } from '../../contract/resources/registry.ts';
import { ConflictError, NotFoundError, OwnerConflictError } from '../../state/resource.ts';
import { ApiError, PUSH_LIMIT, fromTimestamp, serverStream, toServiceError, toTimestamp } from './common.ts';
import { callStream } from './testing.ts';

const ref = { namespace: 'n', type: 'T.bronze.dev', id: 'x' };

describe('toServiceError', () => {
  it('keeps an ApiError status and maps state and filesystem errors', () => {
    expect(toServiceError(new ApiError(grpc.status.UNAVAILABLE, 'later'))).toMatchObject({ code: grpc.status.UNAVAILABLE, details: 'later', message: 'later' });
    expect(toServiceError(new NotFoundError(ref)).code).toBe(grpc.status.NOT_FOUND);
    expect(toServiceError(new UnknownResourceTypeError('x', [])).code).toBe(grpc.status.NOT_FOUND);
    expect(toServiceError(new OwnerConflictError(ref, 'a', 'b')).code).toBe(grpc.status.PERMISSION_DENIED);
    expect(toServiceError(new ConflictError(ref, 'exists', 'already exists')).code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(toServiceError(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })).code).toBe(grpc.status.PERMISSION_DENIED);
    expect(toServiceError(new Error('bug')).code).toBe(grpc.status.INTERNAL);
    expect(toServiceError('text').message).toBe('text');
  });
});

describe('timestamps', () => {
  it('ms ↔ seconds and nanos', () => {
    expect(toTimestamp(1_700_000_000_123)).toEqual({ seconds: 1_700_000_000, nanos: 123_000_000 });
    expect(fromTimestamp({ seconds: '1700000000', nanos: 123_000_000 })).toEqual(new Date(1_700_000_000_123));
    expect(fromTimestamp(null)).toBeUndefined();
  });
});

describe('serverStream', () => {
  it('ends the call when the function returns, fails it with the status of a throw', async () => {
    const ok = callStream(
      serverStream(async (_req, stream) => {
        await stream.send(1);
        await stream.send(2);
      }),
      {},
    );
    await ok.done;
    expect(ok.messages).toEqual([1, 2]);
    expect(ok.error).toBeUndefined();

    const bad = callStream(
      serverStream(async () => {
        throw new ApiError(grpc.status.INVALID_ARGUMENT, 'no');
      }),
      {},
    );
    await bad.done;
    expect(bad.error).toEqual({ code: grpc.status.INVALID_ARGUMENT, message: 'no' });
  });

  it('cuts off a follower that lets too many messages pile up', async () => {
    let aborted = false;
    const s = callStream(
      serverStream(async (_req, stream) => {
        stream.push('first');
        (s as unknown as { writableLength: number }).writableLength = PUSH_LIMIT;
        stream.push('too many');
        await stream.untilCancelled();
        aborted = stream.signal.aborted;
      }),
      {},
    );
    await s.done;
    expect(s.messages).toEqual(['first']);
    expect(s.error).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    await new Promise((r) => setImmediate(r));
    expect(aborted).toBe(true);
  });
});
