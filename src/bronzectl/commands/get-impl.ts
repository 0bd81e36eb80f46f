// What `bronzectl get` does once it runs (see get.ts): resolve the type against the node's
// resource definitions, then list, get or watch. Imported when the command runs.
import YAML from 'yaml';
import type { CallOptions, Client } from '../../client/client.ts';
import { node as nodeMetadata } from '../../client/metadata.ts';
import { timestampToDate, type WatchEventType, type WireResource } from '../../client/types.ts';
import { printColumnValue } from '../../contract/resources/columns.ts';
import type { ResourceDefinitionSpec } from '../../contract/resources/definition.ts';
import { META_NAMESPACE } from '../../contract/resources/namespace.ts';
import { AmbiguousResourceTypeError, UnknownResourceTypeError, resolveDefinition } from '../../contract/resources/registry.ts';
import { RESOURCE_DEFINITION_TYPE } from '../../contract/resources/resource-definition.ts';
import type { Ctx } from '../session.ts';
import { StreamTable, nodeOfEndpoint, sortedJSON, table } from '../output.ts';
import { UserError, type Session } from '../session.ts';
import type { Format, GetFlags } from './get.ts';

// What commands get from `load('get')` (lazy.ts): named here, not in lazy.ts, so that lazy.ts
// names no command file (the commands import it: that would be an import circle).
declare module '../lazy.ts' {
  interface LazyModules {
    get: {
      get: typeof get;
    };
  }
}

/** The spec of a resource from the wire: its YAML form parsed, null when it has none. */
export function specOf(r: WireResource): unknown {
  const y = r.spec?.yaml_spec;
  if (!y) return null;
  try {
    return YAML.parse(y) as unknown;
  } catch {
    return y;
  }
}

/** A resource as talosctl prints it in YAML/JSON: metadata then spec. */
export function resourceDoc(r: WireResource): { metadata: Record<string, unknown>; spec: unknown } {
  const md = r.metadata;
  const meta: Record<string, unknown> = {
    namespace: md?.namespace ?? '',
    type: md?.type ?? '',
    id: md?.id ?? '',
    version: md && /^\d+$/.test(md.version) ? Number(md.version) : (md?.version ?? ''),
    owner: md?.owner ?? '',
    phase: md?.phase ?? '',
    created: timestampToDate(md?.created)?.toISOString() ?? '',
    updated: timestampToDate(md?.updated)?.toISOString() ?? '',
  };
  if (md?.labels && Object.keys(md.labels).length > 0) meta.labels = md.labels;
  if (md?.annotations && Object.keys(md.annotations).length > 0) meta.annotations = md.annotations;
  if (md?.finalizers?.length) meta.finalizers = md.finalizers;
  return { metadata: meta, spec: specOf(r) };
}

/** The definitions the node publishes (COSI's ResourceDefinitionSpec), or undefined when it cannot list them. */
async function fetchDefinitions(client: Client, o: CallOptions): Promise<ResourceDefinitionSpec[] | undefined> {
  try {
    const out: ResourceDefinitionSpec[] = [];
    for await (const r of client.state.list(META_NAMESPACE, RESOURCE_DEFINITION_TYPE, o)) {
      const spec = specOf(r) as Partial<ResourceDefinitionSpec> | null;
      if (spec && typeof spec.type === 'string') {
        out.push({
          type: spec.type,
          displayType: spec.displayType ?? spec.type.split('.')[0]!,
          aliases: spec.aliases ?? [],
          allAliases: spec.allAliases ?? spec.aliases ?? [],
          defaultNamespace: spec.defaultNamespace ?? '',
          printColumns: spec.printColumns ?? [],
        });
      }
    }
    return out;
  } catch {
    return undefined;
  }
}

/** Resolves the user's type name against the node's definitions as a Talos client does; throws a UserError naming close matches or the ambiguity. */
export function resolveType(name: string, defs: ResourceDefinitionSpec[]): ResourceDefinitionSpec {
  try {
    return resolveDefinition(name, defs);
  } catch (e) {
    if (e instanceof UnknownResourceTypeError || e instanceof AmbiguousResourceTypeError) throw new UserError(e.message);
    throw e;
  }
}

class Output {
  readonly #rows: string[][] = [];
  #docs = 0;
  #stream: StreamTable | undefined;

  constructor(
    private readonly s: Session,
    private readonly format: Format,
    private readonly def: ResourceDefinitionSpec | undefined,
    private readonly watch: boolean,
  ) {}

  #header(): string[] {
    const cols = ['NAMESPACE', 'TYPE', 'ID', 'VERSION', ...(this.def?.printColumns ?? []).map((c) => c.name.toUpperCase())];
    return ['NODE', ...(this.watch ? ['*'] : []), ...cols];
  }

  write(node: string, r: WireResource, event?: WatchEventType): void {
    if (this.format === 'table') {
      const md = r.metadata;
      const spec = specOf(r);
      const label = event === 'CREATED' ? '+' : event === 'DESTROYED' ? '-' : ' ';
      const row = [
        node,
        ...(this.watch ? [label] : []),
        md?.namespace ?? '',
        this.def?.displayType ?? md?.type ?? '',
        md?.id ?? '',
        md?.version ?? '',
        ...(this.def?.printColumns ?? []).map((c) => printColumnValue(spec, c)),
      ];
      if (!this.watch) {
        this.#rows.push(row);
        return;
      }
      this.#table().row(row);
      return;
    }
    const doc = resourceDoc(r);
    const ev = event && this.watch ? { event: event.toLowerCase() } : {};
    if (this.format === 'json') {
      this.s.out(sortedJSON({ node, ...ev, ...doc }));
      return;
    }
    const text = YAML.stringify({ node, ...ev, ...doc }, { indent: 4, lineWidth: 0 });
    this.s.out((this.#docs++ > 0 ? '---\n' : '') + text);
  }

  /** A watch's table: its initial contents are held until bootstrapped(), to go out aligned. */
  #table(): StreamTable {
    this.#stream ??= new StreamTable(this.#header(), (x) => this.s.out(x), 3, { hold: true });
    return this.#stream;
  }

  /** A watch has sent its initial contents: print them as one aligned table. */
  bootstrapped(): void {
    if (this.format === 'table' && this.watch) this.#table().release();
  }

  /** Prints a collected table. */
  flush(): void {
    if (this.format === 'table' && !this.watch && this.#rows.length > 0) this.s.out(table([this.#header(), ...this.#rows]));
  }
}

/** `bronzectl get <type> [id]`. */
export async function get(ctx: Ctx, typeName: string, id: string | undefined, opts: GetFlags): Promise<void> {
  const s = ctx.session();
  s.insecure = !!opts.insecure;
  // The definitions come from the first node (or the endpoint itself).
  let defs: ResourceDefinitionSpec[] | undefined;
  if (s.insecure) {
    const t = s.insecureTargets()[0]!;
    defs = await fetchDefinitions(await s.insecureClient(t), s.callOptions());
  } else {
    const targets = await s.nodes();
    const client = await s.client();
    defs = await fetchDefinitions(client, s.callOptions(targets.length > 0 ? { metadata: nodeMetadata(targets[0]!) } : {}));
  }
  const def = defs ? resolveType(typeName, defs) : undefined;
  const type = def?.type ?? typeName;
  const namespace = opts.namespace ?? def?.defaultNamespace ?? '';
  const out = new Output(s, opts.output, def, !!opts.watch);

  if (opts.watch) {
    await s.perNode(async (c, o, target) => {
      const req = { namespace, type, ...(id !== undefined ? { id } : {}), options: { bootstrap_contents: id === undefined }, api_version: 1 };
      for await (const ev of c.state.watch(req, o)) {
        const node = target ?? nodeOfEndpoint(c.currentEndpoint);
        if (ev.event_type === 'ERRORED') s.fail(node, ev.error || 'watch error');
        else if (ev.event_type === 'BOOTSTRAPPED') out.bootstrapped();
        else if (ev.resource && (ev.event_type === 'CREATED' || ev.event_type === 'UPDATED' || ev.event_type === 'DESTROYED')) {
          out.write(node, ev.resource, ev.event_type);
        }
      }
      out.bootstrapped(); // a watch that ended before its bootstrap still shows what it got
    });
    return;
  }

  const results: Array<{ node: string; target: string | undefined; resources: WireResource[] }> = [];
  await s.perNode(async (c, o, target) => {
    const resources: WireResource[] = [];
    if (id !== undefined) resources.push(await c.state.get(namespace, type, id, o));
    else for await (const r of c.state.list(namespace, type, o)) resources.push(r);
    results.push({ node: target ?? nodeOfEndpoint(c.currentEndpoint), target, resources });
  });
  const order = s.insecure ? s.insecureTargets() : await s.nodes();
  results.sort((a, b) => order.indexOf(a.target ?? '') - order.indexOf(b.target ?? ''));
  for (const { node, resources } of results) for (const r of resources) out.write(node, r);
  out.flush();
}
