// `bronzectl inspect dependencies [--with-resources]`: the node's controller/daemon → resource
// graph (inspect.InspectService/ControllerRuntimeDependencies) as a graphviz digraph, as
// talosctl prints it: controllers (and daemons) as boxes, resource types as notes; outputs are
// bold (exclusive) or solid (shared) edges from the producer, inputs solid (strong) or dotted
// (weak) edges to the consumer. --with-resources draws each resource instead of its type, in a
// cluster per type. One node at a time. Pipe it through `dot -Tpng > graph.png`.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';
import type { ControllerDependencyEdge__Output } from '../../contract/wire/inspect/ControllerDependencyEdge.ts';

type Edge = Pick<ControllerDependencyEdge__Output, 'controller_name' | 'edge_type' | 'resource_namespace' | 'resource_type' | 'resource_id'>;

/** A resource as --with-resources draws it. */
export interface ResourceRef {
  namespace: string;
  type: string;
  id: string;
  owner: string;
}

type Attrs = Record<string, string>;

/** A directed graph written as emicklei/dot (talosctl's library) writes one, in insertion order. */
class Dot {
  readonly #nodes = new Map<string, { seq: number; attrs: Attrs; cluster?: string }>();
  readonly #clusters = new Map<string, string>();
  readonly #edges: Array<{ from: number; to: number; attrs: Attrs }> = [];
  #seq = 0;

  node(id: string, attrs: Attrs = {}, cluster?: string): number {
    let n = this.#nodes.get(id);
    if (!n) {
      if (cluster !== undefined && !this.#clusters.has(cluster)) this.#clusters.set(cluster, `cluster_s${this.#clusters.size}`);
      n = { seq: ++this.#seq, attrs: { label: id }, ...(cluster !== undefined ? { cluster } : {}) };
      this.#nodes.set(id, n);
    }
    Object.assign(n.attrs, attrs);
    return n.seq;
  }

  edge(from: number, to: number, attrs: Attrs): void {
    this.#edges.push({ from, to, attrs });
  }

  toString(): string {
    const list = (a: Attrs, sep: string) => Object.keys(a).sort().map((k) => `${k}=${JSON.stringify(a[k])}`).join(sep);
    const node = (n: { seq: number; attrs: Attrs }) => `n${n.seq}[${list(n.attrs, ',')}];`;
    const lines = ['digraph  {'];
    for (const [label, id] of this.#clusters) {
      lines.push(`\tsubgraph ${id} {`, `\t\tID = ${JSON.stringify(id)};`, `\t\t${list({ label }, ';')};`);
      for (const n of this.#nodes.values()) if (n.cluster === label) lines.push(`\t\t${node(n)}`);
      lines.push('\t}');
    }
    lines.push('\t');
    for (const n of this.#nodes.values()) if (n.cluster === undefined) lines.push(`\t${node(n)}`);
    for (const e of this.#edges) lines.push(`\tn${e.from}->n${e.to}${Object.keys(e.attrs).length ? `[${list(e.attrs, ',')}]` : ''};`);
    lines.push('\t', '}');
    return lines.join('\n') + '\n';
  }
}

const RESOURCE_NODE: Attrs = { shape: 'note', fillcolor: 'azure2', style: 'filled' };
const isOutput = (e: Edge) => e.edge_type === 'OUTPUT_EXCLUSIVE' || e.edge_type === 'OUTPUT_SHARED';

/** The graph of `edges` in DOT; with `resources` (by type), each resource instead of its type. */
export function dependenciesDot(edges: readonly Edge[], resources?: ReadonlyMap<string, readonly ResourceRef[]>): string {
  const g = new Dot();
  for (const e of edges) g.node(e.controller_name, { shape: 'box' });
  if (!resources) {
    for (const e of edges) g.node(e.resource_type, RESOURCE_NODE);
    for (const e of edges) {
      const c = g.node(e.controller_name);
      const r = g.node(e.resource_type);
      const label: Attrs = e.resource_id ? { label: e.resource_id } : {};
      if (e.edge_type === 'OUTPUT_EXCLUSIVE') g.edge(c, r, { style: 'bold' });
      else if (e.edge_type === 'OUTPUT_SHARED') g.edge(c, r, { style: 'solid' });
      else if (e.edge_type === 'INPUT_STRONG') g.edge(r, c, { ...label, style: 'solid' });
      else if (e.edge_type === 'INPUT_WEAK') g.edge(r, c, { ...label, style: 'dotted' });
      // INPUT_DESTROY_READY: left out, as talosctl does, to reduce the clutter.
    }
    return g.toString();
  }
  const refId = (r: ResourceRef) => `${r.namespace}/${r.type}/${r.id}`;
  for (const [type, list] of resources) for (const r of list) g.node(refId(r), RESOURCE_NODE, type);
  for (const e of edges) {
    for (const r of resources.get(e.resource_type) ?? []) {
      if (e.resource_id && r.id !== e.resource_id) continue;
      // A controller's outputs are the resources it owns; machined's own parts write under
      // several names, so its edges take every resource of its types.
      if (isOutput(e) && e.controller_name !== 'machined' && r.owner !== e.controller_name) continue;
      const c = g.node(e.controller_name);
      const n = g.node(refId(r));
      if (isOutput(e)) g.edge(c, n, { style: 'solid' });
      else if (e.edge_type === 'INPUT_STRONG') g.edge(n, c, { style: 'solid' });
      else if (e.edge_type === 'INPUT_WEAK') g.edge(n, c, { style: 'dotted' });
    }
  }
  return g.toString();
}

export function register(program: Command, ctx: Ctx): void {
  const inspect = program.command('inspect').description('Inspect internals of Bronze');
  inspect
    .command('dependencies')
    .description('Inspect controller-resource dependencies as graphviz graph.')
    .addHelpText('after', '\nPipe the output of the command through the "dot" program (part of graphviz package)\nto render the graph:\n\n  bronzectl inspect dependencies | dot -Tpng > graph.png\n')
    .option('--with-resources', 'display live resource information with dependencies', false)
    .action(async (opts: { withResources: boolean }) => {
      const s = ctx.session();
      const targets = await s.nodes();
      if (targets.length > 1) throw new UserError('command "inspect dependencies" is not supported with multiple nodes');
      await s.perNode(async (c, o) => {
        const reply = await c.inspect.ControllerRuntimeDependencies({}, o);
        const edges: Edge[] = [];
        for (const msg of reply.messages) {
          if (msg.metadata?.error) s.warn(msg.metadata.error);
          edges.push(...msg.edges);
        }
        let resources: Map<string, ResourceRef[]> | undefined;
        if (opts.withResources) {
          resources = new Map();
          for (const e of edges) {
            if (resources.has(e.resource_type)) continue;
            const list: ResourceRef[] = [];
            resources.set(e.resource_type, list);
            try {
              for await (const r of c.state.list(e.resource_namespace, e.resource_type, o)) {
                const md = r.metadata;
                if (md) list.push({ namespace: md.namespace, type: md.type, id: md.id, owner: md.owner });
              }
            } catch (err) {
              // A type the caller may not read (secrets, to a reader): drawn without its resources.
              s.warn(`listing ${e.resource_type}: ${err instanceof Error ? err.message : String(err)}`);
            }
          }
        }
        s.out(dependenciesDot(edges, resources));
      });
    });
}
