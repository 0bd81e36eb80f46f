// Which gRPC status an error is answered with, decided in one place for the whole machine API.
// Handlers throw what went wrong (an ApiError when they chose the status themselves, else the
// domain's own error: a DiskError, an UpgradeImageError, a ConfigRejected, a state error, a
// Node errno error, a container runtime's error) and toServiceError (common.ts) asks statusOf.
// An error wrapped to add context (`new Error('upgrade failed: ...', { cause })`) is answered with its cause's status.
//
// The tables are data; status.test.ts checks each row.

import * as grpc from '@grpc/grpc-js';
import { UpgradeImageError, type UpgradeImageErrorReason } from '../../install/image.ts';
import { UnknownResourceTypeError } from '../../contract/resources/registry.ts';
import { RegistryError, type RegistryErrorKind } from '../../containerd/registry.ts';
import { InvalidReferenceError } from '../../config/image-ref.ts';
import { ConflictError, NotFoundError, OwnerConflictError, PhaseConflictError, WatchOverflowError } from '../../state/resource.ts';
import { ConfigRejected } from '../config/manager.ts';
import { DiskError } from '../lifecycle/disks.ts';

/** An error with the gRPC status it should be answered with (and trailers to send, if any). */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly metadata: grpc.Metadata | undefined;
  constructor(
    readonly code: grpc.status,
    message: string,
    options?: { cause?: unknown; metadata?: grpc.Metadata },
  ) {
    super(message, options);
    this.metadata = options?.metadata;
  }
}

/** Node's errno codes (err.code) and the status each means for the caller. */
export const ERRNO_STATUS: Readonly<Record<string, grpc.status>> = Object.freeze({
  // What was named does not exist.
  ENOENT: grpc.status.NOT_FOUND,
  ENOTDIR: grpc.status.NOT_FOUND,
  ENXIO: grpc.status.NOT_FOUND,
  ENODEV: grpc.status.NOT_FOUND,
  // Not allowed.
  EACCES: grpc.status.PERMISSION_DENIED,
  EPERM: grpc.status.PERMISSION_DENIED,
  // What was named is not something this call takes.
  EISDIR: grpc.status.INVALID_ARGUMENT,
  EINVAL: grpc.status.INVALID_ARGUMENT,
  ELOOP: grpc.status.INVALID_ARGUMENT,
  ENAMETOOLONG: grpc.status.INVALID_ARGUMENT,
  EEXIST: grpc.status.ALREADY_EXISTS,
  // Out of space, memory or descriptors: retrying later, or with less, may work.
  ENOSPC: grpc.status.RESOURCE_EXHAUSTED,
  EDQUOT: grpc.status.RESOURCE_EXHAUSTED,
  EFBIG: grpc.status.RESOURCE_EXHAUSTED,
  ENOMEM: grpc.status.RESOURCE_EXHAUSTED,
  EMFILE: grpc.status.RESOURCE_EXHAUSTED,
  ENFILE: grpc.status.RESOURCE_EXHAUSTED,
  // The system is not in a state that allows it (a mount in use, a read-only filesystem).
  EBUSY: grpc.status.FAILED_PRECONDITION,
  EROFS: grpc.status.FAILED_PRECONDITION,
  ENOTEMPTY: grpc.status.FAILED_PRECONDITION,
  // A peer (an image server) could not be reached or went away: try again.
  ECONNREFUSED: grpc.status.UNAVAILABLE,
  ECONNRESET: grpc.status.UNAVAILABLE,
  ETIMEDOUT: grpc.status.UNAVAILABLE,
  EHOSTUNREACH: grpc.status.UNAVAILABLE,
  ENETUNREACH: grpc.status.UNAVAILABLE,
  EAI_AGAIN: grpc.status.UNAVAILABLE,
  ENOTFOUND: grpc.status.UNAVAILABLE,
  EPIPE: grpc.status.UNAVAILABLE,
  // A filesystem found corrupt.
  EUCLEAN: grpc.status.DATA_LOSS,
});

/** What an upgrade image's refusal means: the image is at fault, unless staging or reading it failed. */
export const UPGRADE_IMAGE_STATUS: Readonly<Record<UpgradeImageErrorReason, grpc.status | 'cause'>> = Object.freeze({
  'bad-key': grpc.status.FAILED_PRECONDITION, // the node's own trusted key is unusable
  'not-an-image': grpc.status.INVALID_ARGUMENT,
  'bad-signature': grpc.status.INVALID_ARGUMENT,
  'bad-manifest': grpc.status.INVALID_ARGUMENT,
  'wrong-arch': grpc.status.INVALID_ARGUMENT,
  'unexpected-entry': grpc.status.INVALID_ARGUMENT,
  'missing-file': grpc.status.INVALID_ARGUMENT,
  'size-mismatch': grpc.status.INVALID_ARGUMENT,
  'hash-mismatch': grpc.status.INVALID_ARGUMENT,
  truncated: grpc.status.INVALID_ARGUMENT,
  'too-large': grpc.status.INVALID_ARGUMENT,
  // Not the image's fault: the status of what failed (ENOSPC: RESOURCE_EXHAUSTED, ...).
  'read-failed': 'cause',
  'stage-failed': 'cause',
});

/** What a registry's refusal or failure during a pull means for the caller. */
export const REGISTRY_STATUS: Readonly<Record<RegistryErrorKind, grpc.status>> = Object.freeze({
  'not-found': grpc.status.NOT_FOUND,
  auth: grpc.status.PERMISSION_DENIED,
  unreachable: grpc.status.UNAVAILABLE,
  digest: grpc.status.DATA_LOSS, // the registry sent bytes that are not what the digest names
  protocol: grpc.status.UNAVAILABLE, // the registry answered something it should not have: try again, or another mirror
});

/** A gRPC status code (containerd's API errors carry one as `code`, as grpc-js's ServiceError). */
function grpcCode(err: Error): grpc.status | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' && Number.isInteger(code) && code >= 1 && code <= 16 ? (code as grpc.status) : undefined;
}

/** Domain errors and their status, first match wins; 'cause': the status of err.cause. */
export const ERROR_STATUS: ReadonlyArray<{ what: string; match: (err: Error) => boolean; status: (err: Error) => grpc.status | 'cause' }> = [
  { what: 'ApiError', match: (e) => e instanceof ApiError, status: (e) => (e as ApiError).code },
  { what: 'NotFoundError', match: (e) => e instanceof NotFoundError, status: () => grpc.status.NOT_FOUND },
  { what: 'UnknownResourceTypeError', match: (e) => e instanceof UnknownResourceTypeError, status: () => grpc.status.NOT_FOUND },
  { what: 'OwnerConflictError', match: (e) => e instanceof OwnerConflictError, status: () => grpc.status.PERMISSION_DENIED },
  { what: 'ConflictError', match: (e) => e instanceof ConflictError, status: () => grpc.status.FAILED_PRECONDITION },
  { what: 'PhaseConflictError', match: (e) => e instanceof PhaseConflictError, status: () => grpc.status.FAILED_PRECONDITION },
  { what: 'WatchOverflowError', match: (e) => e instanceof WatchOverflowError, status: () => grpc.status.RESOURCE_EXHAUSTED },
  // The disk named for an install is no disk (no such device, a partition), or cannot take it (too small, holds data, in use).
  { what: 'DiskError', match: (e) => e instanceof DiskError, status: (e) => ((e as DiskError).kind === 'argument' ? grpc.status.INVALID_ARGUMENT : grpc.status.FAILED_PRECONDITION) },
  { what: 'UpgradeImageError', match: (e) => e instanceof UpgradeImageError, status: (e) => UPGRADE_IMAGE_STATUS[(e as UpgradeImageError).reason] ?? grpc.status.INTERNAL },
  // An invalid configuration is the caller's; one that needs a reboot, or that the node cannot keep, is the node's state.
  { what: 'ConfigRejected', match: (e) => e instanceof ConfigRejected, status: (e) => ((e as ConfigRejected).kind === 'invalid' ? grpc.status.INVALID_ARGUMENT : grpc.status.FAILED_PRECONDITION) },
  // The container runtime (src/containerd/): a registry's failure by kind; an image reference
  // that does not parse is the caller's.
  { what: 'RegistryError', match: (e) => e instanceof RegistryError, status: (e) => REGISTRY_STATUS[(e as RegistryError).kind] ?? grpc.status.INTERNAL },
  { what: 'InvalidReferenceError', match: (e) => e instanceof InvalidReferenceError, status: () => grpc.status.INVALID_ARGUMENT },
  // containerd's API errors (grpc-js ServiceErrors: NOT_FOUND for an unknown container or image, ...) as they are.
  { what: 'gRPC status', match: (e) => grpcCode(e) !== undefined, status: (e) => grpcCode(e)! },
];

/** The status for a filesystem or network errno code; INTERNAL for one not in ERRNO_STATUS. */
export function errnoStatus(code: string): grpc.status {
  return Object.hasOwn(ERRNO_STATUS, code) ? ERRNO_STATUS[code]! : grpc.status.INTERNAL;
}

export function isErrno(err: unknown): err is NodeJS.ErrnoException & { code: string } {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string';
}

/**
 * The status `err` is answered with: the first ERROR_STATUS row that matches, else its errno
 * code's, else its cause's (a wrapper adding context), else INTERNAL.
 */
export function statusOf(err: unknown, depth = 0): grpc.status {
  if (!(err instanceof Error) || depth > 8) return grpc.status.INTERNAL;
  const row = ERROR_STATUS.find((r) => r.match(err));
  if (row) {
    const s = row.status(err);
    if (s !== 'cause') return s;
    return err.cause === undefined ? grpc.status.INTERNAL : statusOf(err.cause, depth + 1);
  }
  if (isErrno(err) && Object.hasOwn(ERRNO_STATUS, err.code)) return ERRNO_STATUS[err.code]!;
  if (err.cause !== undefined) return statusOf(err.cause, depth + 1);
  return grpc.status.INTERNAL;
}
