// cosi.resource.State over machined's State: Get, List and Watch; the writes are refused
// (resources are read-only through the API; daemons write through their own channel).
//
// The requested type is resolved through the DefinitionRegistry as a Talos client resolves it,
// so any name `get` accepts works ('svc', 'services', 'Service', 'Services.v1alpha1.talos.dev');
// an empty namespace means the type's default one. Replies carry the canonical type, the version
// as a decimal string, and the spec both ways Talos sends it: yaml_spec, the YAML form, and
// proto_spec, the spec encoded with its definition's message (src/contract/resources/).
//
// Watch follows COSI: a watch of one id sends that resource's current state first (a
// DESTROYED tombstone when it does not exist), a kind watch sends the current resources only
// with options.bootstrap_contents; then every change until the client cancels. With
// api_version >= 1 the end of the bootstrap is marked by a BOOTSTRAPPED event and a watch that
// fell behind gets an ERRORED event before the call ends (ABORTED). options.aggregated sends
// the bootstrap in one reply. Label and id queries filter List and kind watches (an update that
// moves a resource out of, or into, the selection is sent as DESTROYED, or CREATED).
//
// Writes (Create, Update, Destroy) come from local daemons only, each naming itself (see
// writerOf below). Update checks new_resource.metadata.version when it is set, as COSI does. A
// State error is answered with its status and, in the bronze-state-error trailer, the error
// itself (src/state/error-detail.ts), so that RemoteState (src/daemon/remote-state.ts) throws
// the same class as the State behind it.
//
// Sensitive types (definition.sensitivity) are shown only to admins: apid passes the caller's
// roles in the `bronze-role` call metadata; a call without it comes over machined's local
// socket and is trusted as admin, as Talos does for its local callers.

import * as grpc from '@grpc/grpc-js';
import { ROLE_METADATA_KEY } from '../../contract/rbac.ts';
import type { ResourceDefinition } from '../../contract/resources/definition.ts';
import { AmbiguousResourceTypeError, type DefinitionRegistry, OWNER_METADATA_KEY, STATE_ERROR_METADATA_KEY } from '../../contract/resources/registry.ts';
import { jsonSpec, protoSpec, specFromYaml, yamlSpec } from '../../contract/resources/wire.ts';
import type { Resource as WireResource } from '../../contract/wire/cosi/resource/Resource.ts';
import type { Event as WireEvent } from '../../contract/wire/cosi/resource/Event.ts';
import type { ListRequest__Output as ListRequest } from '../../contract/wire/cosi/resource/ListRequest.ts';
import type { GetRequest__Output as GetRequest } from '../../contract/wire/cosi/resource/GetRequest.ts';
import type { WatchRequest__Output as WatchRequest } from '../../contract/wire/cosi/resource/WatchRequest.ts';
import type { CreateRequest__Output as CreateRequest } from '../../contract/wire/cosi/resource/CreateRequest.ts';
import type { UpdateRequest__Output as UpdateRequest } from '../../contract/wire/cosi/resource/UpdateRequest.ts';
import type { DestroyRequest__Output as DestroyRequest } from '../../contract/wire/cosi/resource/DestroyRequest.ts';
import type { Resource__Output as WireResourceIn } from '../../contract/wire/cosi/resource/Resource.ts';
import type { LabelTerm__Output as WireLabelTerm } from '../../contract/wire/cosi/resource/LabelTerm.ts';
import type { LabelQuery__Output as WireLabelQuery } from '../../contract/wire/cosi/resource/LabelQuery.ts';
import { ConflictError, NotFoundError, OwnerConflictError, PhaseConflictError, newResource, type Resource } from '../../state/resource.ts';
import { stateErrorDetail } from '../../state/error-detail.ts';
import { type LabelTerm, type State, type WatchEvent, matchLabels } from '../../state/state.ts';
import { ApiError, invalidArgument, permissionDenied, serverStream, toTimestamp, unary } from './common.ts';

export type { WireResource };

export { ROLE_METADATA_KEY };
export const READ_ONLY_MESSAGE = 'resources are read-only through the API';

/**
 * A resource as COSI sends it; `def` is its type's definition (none: YAML only). Without
 * `proto` (the node's own daemons, which read nothing else), the spec goes as yaml_spec alone,
 * written as JSON (wire.ts, jsonSpec).
 */
export function toWireResource(r: Resource, def: ResourceDefinition | undefined, proto = true): WireResource {
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
      annotations: { ...def?.annotations, ...m.annotations },
    },
    spec: proto ? { proto_spec: protoSpec(def, r.spec), yaml_spec: yamlSpec(def, r.spec) } : { proto_spec: Buffer.alloc(0), yaml_spec: jsonSpec(def, r.spec) },
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

const OPS = ['EXISTS', 'EQUAL', 'NOT_EXISTS', 'IN', 'LT', 'LTE', 'LT_NUMERIC', 'LTE_NUMERIC'] as const;

/** A COSI LabelTerm (by enum number or name) as State's LabelTerm; INVALID_ARGUMENT for an unknown operation. */
export function labelTermOf(term: Partial<WireLabelTerm> & { op?: string | number }): LabelTerm {
  const op = typeof term.op === 'number' ? OPS[term.op] : (term.op ?? 'EXISTS');
  const key = term.key ?? '';
  const values = term.value ?? [];
  const value = values[0];
  const invert = !!term.invert;
  switch (op) {
    case 'EXISTS':
      return { key, op: 'exists', invert };
    case 'NOT_EXISTS':
      return { key, op: 'notExists', invert };
    case 'IN':
      return { key, op: 'in', values, invert };
    case 'EQUAL':
    case 'LT':
    case 'LTE':
    case 'LT_NUMERIC':
    case 'LTE_NUMERIC':
      // Without a value nothing compares (COSI's matchers do the same).
      if (value === undefined) return { key, op: 'in', values: [], invert };
      return { key, op: ({ EQUAL: 'equal', LT: 'lt', LTE: 'lte', LT_NUMERIC: 'ltNumeric', LTE_NUMERIC: 'lteNumeric' } as const)[op], value, invert };
    default:
      throw invalidArgument(`unknown label operation ${JSON.stringify(term.op)}`);
  }
}

/** One COSI label term against labels (tests; the filter below converts each query once). */
export function matchTerm(labels: Record<string, string>, term: Partial<WireLabelTerm> & { op?: string | number }): boolean {
  return matchLabels(labels, [labelTermOf(term)]);
}

/** A filter from List/Watch options: every term of a query must hold; any query may. */
export function resourceFilter(opts: { label_query?: Array<Partial<WireLabelQuery>> | Partial<WireLabelQuery>; id_query?: { regexp?: string } | null } | null | undefined): (r: Resource) => boolean {
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
  // Converted (and their operations checked) once, not on every resource.
  const terms = nonEmpty.map((q) => q.terms!.map(labelTermOf));
  return (r) => (re === undefined || re.test(r.metadata.id)) && (terms.length === 0 || terms.some((t) => matchLabels(r.metadata.labels, t)));
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
    let def: ResourceDefinition;
    try {
      def = registry.resolve(type);
    } catch (err) {
      if (err instanceof AmbiguousResourceTypeError) throw invalidArgument(err.message);
      throw err;
    }
    if (def.sensitivity === 'sensitive') {
      const roles = callerRoles(call);
      if (roles !== undefined && !roles.includes('os:admin')) throw permissionDenied(`resources of type ${def.type} are only shown to os:admin`);
    }
    return { def, namespace: namespace || def.defaultNamespace };
  };
  // proto_spec goes to API clients (through apid, which always names the caller's roles); the
  // node's daemons on machined's socket read yaml_spec alone (src/daemon/remote-state.ts), and
  // encoding every spec they publish or watch as protobuf cost machined seconds of CPU at boot
  // under QEMU/TCG (protobufjs generates each type's code the first time it is used).
  const wire = (r: Resource, call: { metadata?: grpc.Metadata }): WireResource => toWireResource(r, registry.get(r.metadata.type), callerRoles(call) !== undefined);

  // Writes: never through apid (which always sets the caller's roles); a local daemon names
  // itself and may write only the types it owns (the definitions' owner).
  const writerOf = (call: { metadata?: grpc.Metadata }): string => {
    const owner = String(call.metadata?.get(OWNER_METADATA_KEY)[0] ?? '');
    if (callerRoles(call) !== undefined || !owner) throw permissionDenied(READ_ONLY_MESSAGE);
    return owner;
  };
  const mayWriteType = (owner: string, type: string | undefined): void => {
    if (!type) throw invalidArgument('resource type is required');
    if (!registry.mayWrite(owner, type)) throw permissionDenied(`${owner} may not write ${type} (owner: ${registry.ownerOf(type) ?? 'none'})`);
  };
  const fromWire = (w: Partial<WireResourceIn> | null | undefined): { namespace: string; type: string; id: string; labels: Record<string, string>; spec: unknown } => {
    const m = w?.metadata;
    if (!m?.namespace || !m.type || !m.id) throw invalidArgument('resource metadata needs namespace, type and id');
    let spec: unknown = null;
    try {
      spec = specFromYaml(registry.get(m.type), w?.spec?.yaml_spec ?? '');
    } catch (err) {
      throw invalidArgument(`spec: not YAML: ${(err as Error).message}`);
    }
    return { namespace: m.namespace, type: m.type, id: m.id, labels: { ...(m.labels ?? {}) }, spec };
  };
  // A State error is answered with its status and, in a trailer, what it was (RemoteState
  // throws the same class again).
  const asApiError = (err: unknown): never => {
    const detail = stateErrorDetail(err);
    const metadata = new grpc.Metadata();
    if (detail !== undefined) metadata.set(STATE_ERROR_METADATA_KEY, detail);
    if (err instanceof NotFoundError) throw new ApiError(grpc.status.NOT_FOUND, err.message, { metadata });
    if (err instanceof ConflictError || err instanceof OwnerConflictError || err instanceof PhaseConflictError) throw new ApiError(grpc.status.FAILED_PRECONDITION, err.message, { metadata });
    throw err;
  };
  // new_resource.metadata.version, when set, is the version the writer read (COSI's check): the
  // update fails unless it is still the stored one. Unset (''): no check.
  const expectedVersionOf = (w: Partial<WireResourceIn> | null | undefined): number | undefined => {
    const v = w?.metadata?.version ?? '';
    if (v === '') return undefined;
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1) throw invalidArgument(`resource version ${JSON.stringify(v)} is not a version`);
    return n;
  };

  return {
    Get: unary(async (req: Partial<GetRequest>, call) => {
      const { def, namespace } = resolve(req.type, req.namespace, call);
      if (!req.id) throw invalidArgument('resource id is required');
      return { resource: wire(await state.get(namespace, def.type, req.id).catch(asApiError), call) };
    }),

    List: serverStream(async (req: Partial<ListRequest>, stream, call) => {
      const { def, namespace } = resolve(req.type, req.namespace, call);
      const keep = resourceFilter(req.options);
      for (const r of await state.list(namespace, def.type)) {
        if (stream.closed) return;
        if (keep(r)) await stream.send({ resource: wire(r, call) });
      }
    }),

    Watch: serverStream(
      async (req: Partial<Omit<WatchRequest, 'options'>> & { options?: Partial<NonNullable<WatchRequest['options']>> | null }, stream, call) => {
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
                await emit({ resource: wire(ev.resource, call), event_type: 'CREATED' });
              }
              break;
            case 'destroyed':
              if (keep(ev.resource)) await emit({ resource: wire(ev.resource, call), event_type: 'DESTROYED' });
              break;
            case 'updated': {
              const was = keep(ev.old);
              const is = keep(ev.resource);
              if (was && is) await emit({ resource: wire(ev.resource, call), old: wire(ev.old, call), event_type: 'UPDATED' });
              else if (is) await emit({ resource: wire(ev.resource, call), event_type: 'CREATED' });
              else if (was) await emit({ resource: wire(ev.old, call), event_type: 'DESTROYED' });
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

    Create: unary(async (req: Partial<CreateRequest>, call) => {
      const owner = writerOf(call);
      const r = fromWire(req.resource);
      mayWriteType(owner, r.type);
      const created = await state.create(newResource(r.namespace, r.type, r.id, r.spec, { labels: r.labels }), { owner }).catch(asApiError);
      return { resource: wire(created, call) };
    }),
    Update: unary(async (req: Partial<UpdateRequest>, call) => {
      const owner = writerOf(call);
      const r = fromWire(req.new_resource);
      mayWriteType(owner, r.type);
      const expectedVersion = expectedVersionOf(req.new_resource);
      const current = await state.get(r.namespace, r.type, r.id).catch(asApiError);
      const updated = await state.update({ ...current, spec: r.spec, metadata: { ...current.metadata, labels: r.labels } }, { owner, expectedVersion }).catch(asApiError);
      return { resource: wire(updated, call) };
    }),
    Destroy: unary(async (req: Partial<DestroyRequest>, call) => {
      const owner = writerOf(call);
      mayWriteType(owner, req.type);
      if (!req.namespace || !req.id) throw invalidArgument('namespace and id are required');
      await state.destroy(req.namespace, req.type!, req.id, { owner }).catch(asApiError);
      return {};
    }),
  };
}
