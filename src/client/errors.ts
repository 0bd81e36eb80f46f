// gRPC errors as operators of Talos know them: `rpc error: code = Unavailable desc = ...`.
import * as grpc from '@grpc/grpc-js';

const CODE_NAMES: Record<number, string> = {
  0: 'OK',
  1: 'Canceled',
  2: 'Unknown',
  3: 'InvalidArgument',
  4: 'DeadlineExceeded',
  5: 'NotFound',
  6: 'AlreadyExists',
  7: 'PermissionDenied',
  8: 'ResourceExhausted',
  9: 'FailedPrecondition',
  10: 'Aborted',
  11: 'OutOfRange',
  12: 'Unimplemented',
  13: 'Internal',
  14: 'Unavailable',
  15: 'DataLoss',
  16: 'Unauthenticated',
};

export function codeName(code: number): string {
  return CODE_NAMES[code] ?? `Code(${code})`;
}

/** A failed call: the gRPC status, and the endpoint that answered (or failed to). */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly code: grpc.status,
    readonly details: string,
    /** The endpoint as the user wrote it. */
    readonly endpoint: string,
  ) {
    super(`rpc error: code = ${codeName(code)} desc = ${details}`);
  }
}

export function isServiceError(e: unknown): e is grpc.ServiceError {
  return e instanceof Error && typeof (e as Partial<grpc.ServiceError>).code === 'number' && 'details' in e;
}

export function toRpcError(e: unknown, endpoint: string): RpcError {
  if (e instanceof RpcError) return e;
  if (isServiceError(e)) {
    // grpc-js appends an empty "Resolution note: " to connection failures.
    const details = (e.details || e.message).replace(/\.?\s*Resolution note:\s*$/, '');
    return new RpcError(e.code, details, endpoint);
  }
  return new RpcError(grpc.status.UNKNOWN, e instanceof Error ? e.message : String(e), endpoint);
}
