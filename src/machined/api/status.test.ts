import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { UpgradeImageError } from '../../install/image.ts';
import { UnknownResourceTypeError } from '../../contract/resources/registry.ts';
import { RegistryError } from '../../containerd/registry.ts';
import { InvalidReferenceError } from '../../config/image-ref.ts';
import { ConflictError, NotFoundError, OwnerConflictError, PhaseConflictError } from '../../state/resource.ts';
import { ConfigRejected } from '../config/manager.ts';
import { DiskError } from '../lifecycle/disks.ts';
import { ApiError, ERRNO_STATUS, errnoStatus, statusOf } from './status.ts';
import { toServiceError } from './common.ts';

const ref = { namespace: 'n', type: 'T.bronze.dev', id: 'x' };
const errno = (code: string, message = `${code}: something`) => Object.assign(new Error(message), { code });
const S = grpc.status;
const grpcError = (code: number, message = 'from containerd') => Object.assign(new Error(message), { code });

/** Each row: what is thrown, the status the caller must see. */
const TABLE: Array<[string, unknown, grpc.status]> = [
  ['an ApiError keeps its code', new ApiError(S.UNAVAILABLE, 'later'), S.UNAVAILABLE],
  ['a missing resource', new NotFoundError(ref), S.NOT_FOUND],
  ['an unknown resource type', new UnknownResourceTypeError('x', []), S.NOT_FOUND],
  ['another owner’s resource', new OwnerConflictError(ref, 'a', 'b'), S.PERMISSION_DENIED],
  ['a resource that exists', new ConflictError(ref, 'exists', 'already exists'), S.FAILED_PRECONDITION],
  ['a resource in teardown', new PhaseConflictError(ref, 'tearingDown', 'update'), S.FAILED_PRECONDITION],
  ['an install disk that is too small', new DiskError('/dev/vdc is 1.0 GiB: too small'), S.FAILED_PRECONDITION],
  ['an install disk that does not exist', new DiskError('/dev/vdz: no such device', 'argument'), S.INVALID_ARGUMENT],
  ['a tampered image', new UpgradeImageError('hash-mismatch', 'hash mismatch for initramfs.xz'), S.INVALID_ARGUMENT],
  ['an unsigned image', new UpgradeImageError('not-an-image', 'unsigned'), S.INVALID_ARGUMENT],
  ['the node’s own key unusable', new UpgradeImageError('bad-key', 'not Ed25519'), S.FAILED_PRECONDITION],
  ['no space to stage an upgrade (ENOSPC)', new UpgradeImageError('stage-failed', 'staging failed', { cause: errno('ENOSPC') }), S.RESOURCE_EXHAUSTED],
  ['no space, wrapped for context', new Error('upgrade failed, nothing was written', { cause: new UpgradeImageError('stage-failed', 'x', { cause: errno('ENOSPC') }) }), S.RESOURCE_EXHAUSTED],
  ['a stage directory that cannot be made for lack of rights', new UpgradeImageError('stage-failed', 'mkdir', { cause: errno('EACCES') }), S.PERMISSION_DENIED],
  ['an image server that went away', new UpgradeImageError('read-failed', 'read', { cause: new TypeError('fetch failed', { cause: errno('ECONNRESET') }) }), S.UNAVAILABLE],
  ['a staging failure of unknown kind', new UpgradeImageError('stage-failed', 'bug'), S.INTERNAL],
  ['an invalid configuration', new ConfigRejected(['machine.type: required']), S.INVALID_ARGUMENT],
  ['a configuration that needs a reboot', new ConfigRejected(['needs a reboot'], 'needs-reboot'), S.FAILED_PRECONDITION],
  ['a configuration the node cannot keep', new ConfigRejected(['STATE failed'], 'state'), S.FAILED_PRECONDITION],
  ['an unknown container or image (containerd: NOT_FOUND)', grpcError(S.NOT_FOUND), S.NOT_FOUND],
  ['containerd refusing a call in its state (FAILED_PRECONDITION)', grpcError(S.FAILED_PRECONDITION), S.FAILED_PRECONDITION],
  ['the highest gRPC code (UNAUTHENTICATED)', grpcError(S.UNAUTHENTICATED), S.UNAUTHENTICATED],
  ['containerd’s error, wrapped for context', new Error('import failed', { cause: grpcError(S.ALREADY_EXISTS) }), S.ALREADY_EXISTS],
  ['a numeric code that is no gRPC status (0)', grpcError(0), S.INTERNAL],
  ['a numeric code that is no gRPC status (17)', grpcError(17), S.INTERNAL],
  ['a code that is not an integer', grpcError(5.5), S.INTERNAL],
  ['an image the registry does not have', new RegistryError('not-found', 'image x:1 not found in registry r'), S.NOT_FOUND],
  ['a registry refusing the credentials', new RegistryError('auth', 'unauthorized'), S.PERMISSION_DENIED],
  ['a registry that cannot be reached', new RegistryError('unreachable', 'connect ECONNREFUSED'), S.UNAVAILABLE],
  ['a blob that is not what its digest says', new RegistryError('digest', 'digest mismatch'), S.DATA_LOSS],
  ['a registry answering nonsense', new RegistryError('protocol', 'unexpected 500'), S.UNAVAILABLE],
  ['a registry error, wrapped for context', new Error('pull failed', { cause: new RegistryError('auth', 'unauthorized') }), S.PERMISSION_DENIED],
  ['an image reference that does not parse', new InvalidReferenceError('A:', 'invalid reference format'), S.INVALID_ARGUMENT],
  ['a bad reference in an import, wrapped', new Error('import failed', { cause: new InvalidReferenceError('Bad', 'bad name') }), S.INVALID_ARGUMENT],
  ['a full disk writing a slot', errno('ENOSPC'), S.RESOURCE_EXHAUSTED],
  ['a missing file', errno('ENOENT'), S.NOT_FOUND],
  ['no permission', errno('EACCES'), S.PERMISSION_DENIED],
  ['a busy device', errno('EBUSY'), S.FAILED_PRECONDITION],
  ['a corrupt filesystem', errno('EUCLEAN'), S.DATA_LOSS],
  ['an errno Bronze has no row for', errno('ENOTSUP'), S.INTERNAL],
  ['a bug', new Error('bug'), S.INTERNAL],
  ['not an Error at all', 'text', S.INTERNAL],
];

describe('statusOf', () => {
  it.each(TABLE)('%s', (_what, err, want) => {
    expect(grpc.status[statusOf(err)]).toBe(grpc.status[want]);
  });

  it('toServiceError answers with statusOf and the message', () => {
    const err = new Error('upgrade failed, nothing was written: no space left', { cause: new UpgradeImageError('stage-failed', 'x', { cause: errno('ENOSPC') }) });
    expect(toServiceError(err)).toMatchObject({ code: S.RESOURCE_EXHAUSTED, details: err.message, message: err.message });
    expect(toServiceError('text')).toMatchObject({ code: S.INTERNAL, message: 'text' });
  });

  it('every errno row is a real status, and unknown codes are INTERNAL', () => {
    for (const [code, status] of Object.entries(ERRNO_STATUS)) {
      expect(grpc.status[status], code).toBeDefined();
      expect(errnoStatus(code)).toBe(status);
    }
    expect(errnoStatus('EWHATEVER')).toBe(S.INTERNAL);
    expect(errnoStatus('toString')).toBe(S.INTERNAL);
  });
});
