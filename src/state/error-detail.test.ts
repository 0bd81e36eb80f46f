import { describe, expect, it } from 'vitest';
import { stateErrorDetail, stateErrorFromDetail } from './error-detail.ts';
import { ConflictError, NotFoundError, OwnerConflictError, PhaseConflictError } from './resource.ts';

describe('State errors as text and back', () => {
  const ref = { namespace: 'network', type: 'LinkStatuses.net.talos.dev', id: 'eth0' };

  it('rebuilds each State error as its class, with its fields and message', () => {
    for (const err of [
      new NotFoundError(ref),
      new ConflictError(ref, 'version', 'version is 2, expected 1'),
      new OwnerConflictError(ref, 'networkd', 'udevd'),
      new PhaseConflictError(ref, 'tearingDown', 'update'),
    ]) {
      const back = stateErrorFromDetail(stateErrorDetail(err)!);
      expect(back).toBeInstanceOf(err.constructor);
      expect(back).toMatchObject({ ...err, message: err.message });
    }
  });

  it('describes no other error, and reads no other text', () => {
    expect(stateErrorDetail(new Error('x'))).toBeUndefined();
    expect(stateErrorFromDetail('not json')).toBeUndefined();
    expect(stateErrorFromDetail(JSON.stringify({ name: 'Error', namespace: 'a', type: 'b', id: 'c' }))).toBeUndefined();
    expect(stateErrorFromDetail(JSON.stringify({ name: 'ConflictError', namespace: 'a', type: 'b', id: 'c', reason: 'nope' }))).toBeUndefined();
  });
});
