// cosi.resource.State over machined's State: Get, List and Watch; the writes are refused
// (resources are read-only through the API; daemons write through their own channel).
//
// The requested type is resolved through the DefinitionRegistry, so any name `get` accepts
// works ('svc', 'services', 'Service', 'Services.bronze.dev'); an empty namespace means the
// type's default one. Replies carry the canonical type, the version as a decimal string, and
// the spec as YAML text (yaml_spec) with an empty proto_spec.
//
// Watch follows COSI: a watch of one id sends that resource's current state first (a
// DESTROYED tombstone when it does not exist), a kind watch sends the current resources only
// with options.bootstrap_contents; then every change until the client cancels. With
// api_version >= 1 the end of the bootstrap is marked by a BOOTSTRAPPED event and a watch that
// fell behind gets an ERRORED event before the call ends (ABORTED). options.aggregated sends
// the bootstrap in one reply. Label and id queries filter List and kind watches (an update that
// moves a resource out of, or into, the selection is sent as DESTROYED, or CREATED).
//
// Sensitive types (definition.sensitive) are shown only to admins: apid passes the caller's
// roles in the `bronze-role` call metadata; a call without it comes over machined's local
// socket and is trusted as admin, as Talos does for its local callers.

import * as grpc from '@grpc/grpc-js';
import YAML from 'yaml';
import type { DefinitionRegistry, ResourceDefinition } from '../../state/definitions.ts';
import { ConflictError, NotFoundError, OwnerConflictError, PhaseConflictError, newResource, type Resource } from '../../state/resource.ts';
import type { State, WatchEvent } from '../../state/state.ts';
import { ApiError, invalidArgument, permissionDenied, serverStream, toTimestamp, unary, type Timestamp } from './common.ts';
import { OWNER_METADATA_KEY, TYPE_OWNERS, mayWrite } from '../../contract/owners.ts';

/** gRPC metadata key in which apid passes the caller's roles (one value per role). */
export const ROLE_METADATA_KEY = 'bronze-role';
export const READ_ONLY_MESSAGE = 'resources are read-only through the API';

export interface WireResource {
  metadata: {
    namespace: string;
    type: string;
    id: string;
    version: string;
    owner: string;
    phase: string;
    created?: Timestamp;
    updated?: Timestamp;
    finalizers: string[];
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  spec: { proto_spec: Buffer; yaml_spec: string };
}

export function toWireResource(r: Resource): WireResource {
  const m = r.metadata;
  return {
    metadata: {
      namespace: m.namespace,
      type: m.type,
      id: m.id,
      version: String(m.version),
      owner: m.owner,
      phase: m.phase,
      created: toTimestamp(m.created),
      updated: toTimestamp(m.updated),
      finalizers: [...m.finalizers],
      labels: { ...m.labels },
      annotations: { ...m.annotations },
    },
    spec: { proto_spec: Buffer.alloc(0), yaml_spec: YAML.stringify(r.spec ?? null) },
  };
}

/** What COSI sends for a watched id that does not exist. */
function tombstone(namespace: string, type: string, id: string): WireResource {
  return {
    metadata: { namespace, type, id, version: '0', owner: '', phase: 'running', finalizers: [], labels: {}, annotations: {} },
    spec: { proto_spec: Buffer.alloc(0), yaml_spec: '' },
  };
}

// ---------------------------------------------------------------------------------------------
// Label and id queries (COSI semantics).

export interface WireLabelTerm {
  key?: string;
  op?: string | number;
  value?: string[];
  invert?: boolean;
}

export interface WireLabelQuery {
  terms?: WireLabelTerm[];
}

const OPS = ['EXISTS', 'EQUAL', 'NOT_EXISTS', 'IN', 'LT', 'LTE', 'LT_NUMERIC', 'LTE_NUMERIC'] as const;

export function matchTerm(labels: Record<string, string>, term: WireLabelTerm): boolean {
  const op = typeof term.op === 'number' ? OPS[term.op] : (term.op ?? 'EXISTS');
  const key = term.key ?? '';
  const has = Object.hasOwn(labels, key);
  const v = labels[key];
  const want = term.value ?? [];
  let ok: boolean;
  switch (op) {
    case 'EXISTS':
      ok = has;
      break;
    case 'NOT_EXISTS':
      ok = !has;
      break;
    case 'EQUAL':
      ok = has && v === want[0];
      break;
    case 'IN':
      ok = has && want.includes(v!);
      break;
    case 'LT':
      ok = has && want[0] !== undefined && v! < want[0];
      break;
    case 'LTE':
      ok = has && want[0] !== undefined && v! <= want[0];
      break;
    case 'LT_NUMERIC':
    case 'LTE_NUMERIC': {
      const a = Number(v);
      const b = Number(want[0]);
      ok = has && Number.isFinite(a) && Number.isFinite(b) && (op === 'LT_NUMERIC' ? a < b : a <= b);
      break;
    }
    default:
      throw invalidArgument(`unknown label operation ${JSON.stringify(term.op)}`);
  }
  return term.invert ? !ok : ok;
}

/** A filter from List/Watch options: every term of a query must hold; any query may. */
export function resourceFilter(opts: { label_query?: WireLabelQuery[] | WireLabelQuery; id_query?: { regexp?: string } | null } | null | undefined): (r: Resource) => boolean {
  const raw = opts?.label_query;
  const queries = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const nonEmpty = queries.filter((q) => (q.terms ?? []).length > 0);
  let re: RegExp | undefined;
  const src = opts?.id_query?.regexp ?? '';
  if (src !== '') {
    try {
      re = new RegExp(src);
    } catch (err) {
      throw invalidArgument(`id_query: invalid regular expression ${JSON.stringify(src)}: ${(err as Error).message}`);
    }
  }
  // Validate the operations now rather than on the first resource.
  for (const q of nonEmpty) for (const t of q.terms!) matchTerm({}, t);
  return (r) =>
    (re === undefined || re.test(r.metadata.id)) &&
    (nonEmpty.length === 0 || nonEmpty.some((q) => q.terms!.every((t) => matchTerm(r.metadata.labels, t))));
}

// ---------------------------------------------------------------------------------------------
// The service.

export interface ResourceApiDeps {
  state: State;
  registry: DefinitionRegistry;
}

function callerRoles(call: { metadata?: grpc.Metadata }): string[] | undefined {
  const values = call.metadata?.get(ROLE_METADATA_KEY) ?? [];
  if (values.length === 0) return undefined;
  return values.flatMap((v) => String(v).split(',')).map((r) => r.trim());
}

const EVENT_TYPE = { created: 'CREATED', updated: 'UPDATED', destroyed: 'DESTROYED', bootstrapped: 'BOOTSTRAPPED', errored: 'ERRORED' } as const;

interface WireEvent {
  resource?: WireResource;
  event_type: (typeof EVENT_TYPE)[keyof typeof EVENT_TYPE];
  old?: WireResource;
  error?: string;
}

export interface ResourceHandlers extends grpc.UntypedServiceImplementation {
  Get: grpc.handleUnaryCall<any, any>;
  List: grpc.handleServerStreamingCall<any, any>;
  Watch: grpc.handleServerStreamingCall<any, any>;
  Create: grpc.handleUnaryCall<any, any>;
  Update: grpc.handleUnaryCall<any, any>;
  Destroy: grpc.handleUnaryCall<any, any>;
}

export function resourceHandlers(deps: ResourceApiDeps): ResourceHandlers {
  const { state, registry } = deps;

  const resolve = (type: string | undefined, namespace: string | undefined, call: { metadata?: grpc.Metadata }): { def: ResourceDefinition; namespace: string } => {
    if (!type) throw invalidArgument('resource type is required');
    const def = registry.resolve(type);
    if (def.sensitive) {
      const roles = callerRoles(call);
      if (roles !== undefined && !roles.includes('os:admin')) throw permissionDenied(`resources of type ${def.type} are only shown to os:admin`);
    }
    return { def, namespace: namespace || def.defaultNamespace };
  };

  // Writes: never through apid (which always sets the caller's roles); a local daemon names
  // itself and may write only the types it owns (src/contract/owners.ts).
  const writerOf = (call: { metadata?: grpc.Metadata }): string => {
    const owner = String(call.metadata?.get(OWNER_METADATA_KEY)[0] ?? '');
    if (callerRoles(call) !== undefined || !owner) throw permissionDenied(READ_ONLY_MESSAGE);
    return owner;
  };
  const mayWriteType = (owner: string, type: string | undefined): void => {
    if (!type) throw invalidArgument('resource type is required');
    if (!mayWrite(owner, type)) throw permissionDenied(`${owner} may not write ${type} (owner: ${TYPE_OWNERS[type] ?? 'none'})`);
  };
  const fromWire = (w: Partial<WireResource> | undefined): { namespace: string; type: string; id: string; labels: Record<string, string>; spec: unknown } => {
    const m = w?.metadata;
    if (!m?.namespace || !m.type || !m.id) throw invalidArgument('resource metadata needs namespace, type and id');
    let spec: unknown = null;
    try {
      spec = w?.spec?.yaml_spec ? YAML.parse(w.spec.yaml_spec) : null;
    } catch (err) {
      throw invalidArgument(`spec: not YAML: ${(err as Error).message}`);
    }
    return { namespace: m.namespace, type: m.type, id: m.id, labels: { ...(m.labels ?? {}) }, spec };
  };
  const asApiError = (err: unknown): never => {
    if (err instanceof NotFoundError) throw new ApiError(grpc.status.NOT_FOUND, err.message);
    if (err instanceof ConflictError || err instanceof OwnerConflictError || err instanceof PhaseConflictError) throw new ApiError(grpc.status.FAILED_PRECONDITION, err.message);
    throw err;
  };

  return {
    Get: unary(async (req: { namespace?: string; type?: string; id?: string }, call) => {
      const { def, namespace } = resolve(req.type, req.namespace, call);
      if (!req.id) throw invalidArgument('resource id is required');
      return { resource: toWireResource(await state.get(namespace, def.type, req.id)) };
    }),

    List: serverStream(async (req: { namespace?: string; type?: string; options?: { label_query?: WireLabelQuery[]; id_query?: { regexp?: string } } }, stream, call) => {
      const { def, namespace } = resolve(req.type, req.namespace, call);
      const keep = resourceFilter(req.options);
      for (const r of await state.list(namespace, def.type)) {
        if (stream.closed) return;
        if (keep(r)) await stream.send({ resource: toWireResource(r) });
      }
    }),

    Watch: serverStream(
      async (
        req: {
          namespace?: string;
          type?: string;
          id?: string | null;
          options?: { bootstrap_contents?: boolean; tail_events?: number; aggregated?: boolean; label_query?: WireLabelQuery[]; id_query?: { regexp?: string }; start_from_bookmark?: Buffer | null } | null;
          api_version?: number;
        },
        stream,
        call,
      ) => {
        const { def, namespace } = resolve(req.type, req.namespace, call);
        const opts = req.options ?? {};
        if ((opts.tail_events ?? 0) !== 0) throw new ApiError(grpc.status.UNIMPLEMENTED, 'tail_events is not supported: machined keeps no resource event history');
        if (opts.start_from_bookmark && opts.start_from_bookmark.length > 0) throw new ApiError(grpc.status.UNIMPLEMENTED, 'bookmarks are not supported');
        const v1 = (req.api_version ?? 0) >= 1;
        const single = typeof req.id === 'string' && req.id !== '';
        const keep = single ? () => true : resourceFilter(opts);
        const events: AsyncIterable<WatchEvent> = single
          ? state.watch(namespace, def.type, req.id!, { signal: stream.signal })
          : state.watchKind(namespace, def.type, { signal: stream.signal, bootstrap: !!opts.bootstrap_contents });

        let bootstrapping = single || !!opts.bootstrap_contents;
        let sentInitial = false;
        const batch: WireEvent[] = [];
        const flush = async () => {
          if (batch.length > 0) await stream.send({ event: batch.splice(0) });
        };
        const emit = async (ev: WireEvent) => {
          batch.push(ev);
          if (!(bootstrapping && opts.aggregated)) await flush();
        };

        for await (const ev of events) {
          if (stream.closed) return;
          switch (ev.type) {
            case 'created':
              if (keep(ev.resource)) {
                sentInitial = true;
                await emit({ resource: toWireResource(ev.resource), event_type: 'CREATED' });
              }
              break;
            case 'destroyed':
              if (keep(ev.resource)) await emit({ resource: toWireResource(ev.resource), event_type: 'DESTROYED' });
              break;
            case 'updated': {
              const was = keep(ev.old);
              const is = keep(ev.resource);
              if (was && is) await emit({ resource: toWireResource(ev.resource), old: toWireResource(ev.old), event_type: 'UPDATED' });
              else if (is) await emit({ resource: toWireResource(ev.resource), event_type: 'CREATED' });
              else if (was) await emit({ resource: toWireResource(ev.old), event_type: 'DESTROYED' });
              break;
            }
            case 'bootstrapped':
              if (single && !sentInitial) await emit({ resource: tombstone(namespace, def.type, req.id!), event_type: 'DESTROYED' });
              if (v1) batch.push({ event_type: 'BOOTSTRAPPED' });
              bootstrapping = false;
              await flush();
              break;
            case 'errored':
              if (v1) {
                batch.push({ event_type: 'ERRORED', error: ev.error.message });
                await flush();
              }
              throw new ApiError(grpc.status.ABORTED, ev.error.message);
          }
        }
      },
    ),

    Create: unary(async (req: { resource?: WireResource }, call) => {
      const owner = writerOf(call);
      const r = fromWire(req.resource);
      mayWriteType(owner, r.type);
      const created = await state.create(newResource(r.namespace, r.type, r.id, r.spec, { labels: r.labels }), { owner }).catch(asApiError);
      return { resource: toWireResource(created) };
    }),
    Update: unary(async (req: { new_resource?: WireResource }, call) => {
      const owner = writerOf(call);
      const r = fromWire(req.new_resource);
      mayWriteType(owner, r.type);
      const current = await state.get(r.namespace, r.type, r.id).catch(asApiError);
      const updated = await state.update({ ...current, spec: r.spec, metadata: { ...current.metadata, labels: r.labels } }, { owner }).catch(asApiError);
      return { resource: toWireResource(updated) };
    }),
    Destroy: unary(async (req: { namespace?: string; type?: string; id?: string }, call) => {
      const owner = writerOf(call);
      mayWriteType(owner, req.type);
      if (!req.namespace || !req.id) throw invalidArgument('namespace and id are required');
      await state.destroy(req.namespace, req.type!, req.id, { owner }).catch(asApiError);
      return {};
    }),
  };
}
