// Resources: the unit of everything machined knows and the API shows (COSI-like).
//
// A resource is addressed by namespace/type/id. Its metadata is maintained by the State: the
// version starts at 1 on create and grows by one on every write; the owner (the name of the
// controller or daemon that created it, or '' for none) is the only writer allowed to change or
// destroy it; the phase goes from 'running' to 'tearingDown' (and never back) before a resource
// with finalizers can be destroyed. The spec is a plain JSON-able object.

export type Phase = 'running' | 'tearingDown';

export interface Metadata {
  namespace: string;
  /** e.g. 'Services.v1alpha1.talos.dev'. */
  type: string;
  id: string;
  /** 1 after create, +1 on every update, teardown and finalizer change. */
  version: number;
  /** Controller (or daemon) name, or '' for none. */
  owner: string;
  phase: Phase;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  created: Date;
  updated: Date;
  /** Other parties holding on to the resource: it can be destroyed only when this is empty. */
  finalizers: string[];
}

export interface Resource<S = unknown> {
  metadata: Metadata;
  spec: S;
}

/** Where a resource lives: enough to name it in errors and logs. */
export interface Ref {
  namespace: string;
  type: string;
  id: string;
}

export function refString(ref: Ref): string {
  return `${ref.namespace}/${ref.type}/${ref.id}`;
}

/**
 * A new resource to pass to State.create. The State sets version, owner, phase and times
 * itself; labels, annotations and finalizers are taken as given.
 */
export function newResource<S>(
  namespace: string,
  type: string,
  id: string,
  spec: S,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] } = {},
): Resource<S> {
  const now = new Date();
  return {
    metadata: {
      namespace,
      type,
      id,
      version: 0,
      owner: '',
      phase: 'running',
      labels: { ...meta.labels },
      annotations: { ...meta.annotations },
      created: now,
      updated: now,
      finalizers: [...(meta.finalizers ?? [])],
    },
    spec,
  };
}

/** A deep copy (Dates stay Dates). */
export function cloneResource<S>(r: Resource<S>): Resource<S> {
  return structuredClone(r);
}

/** Deep equality of JSON-like values (plain objects, arrays, primitives, Dates). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b);
  }
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

// ---------------------------------------------------------------------------------------------
// Errors. Every State implementation throws these, so callers can tell them apart with
// instanceof (and a remote implementation maps its wire errors back to them).

export abstract class StateError extends Error {
  readonly namespace: string;
  readonly type: string;
  readonly id: string;
  constructor(ref: Ref, message: string) {
    super(`resource ${refString(ref)}: ${message}`);
    this.namespace = ref.namespace;
    this.type = ref.type;
    this.id = ref.id;
  }
}

export class NotFoundError extends StateError {
  override name = 'NotFoundError';
  constructor(ref: Ref) {
    super(ref, 'not found');
  }
}

/** The write lost a race or is not allowed in the resource's current state. */
export class ConflictError extends StateError {
  override name = 'ConflictError';
  constructor(
    ref: Ref,
    readonly reason: 'exists' | 'version' | 'finalizers',
    message: string,
  ) {
    super(ref, message);
  }
}

/** Only the owner may update, tear down or destroy a resource. */
export class OwnerConflictError extends StateError {
  override name = 'OwnerConflictError';
  constructor(
    ref: Ref,
    readonly owner: string,
    readonly requestedBy: string,
  ) {
    super(ref, `owned by ${JSON.stringify(owner)}, not ${JSON.stringify(requestedBy)}`);
  }
}

/** The resource is tearing down: it can no longer be updated or gain finalizers. */
export class PhaseConflictError extends StateError {
  override name = 'PhaseConflictError';
  constructor(
    ref: Ref,
    readonly phase: Phase,
    operation: string,
  ) {
    super(ref, `cannot ${operation}: phase is ${phase}`);
  }
}

/** Delivered (as an 'errored' watch event) to a watcher that fell too far behind. */
export class WatchOverflowError extends Error {
  override name = 'WatchOverflowError';
  constructor(
    readonly what: string,
    readonly limit: number,
  ) {
    super(`watch of ${what} fell more than ${limit} events behind and was closed; watch again to resync`);
  }
}
