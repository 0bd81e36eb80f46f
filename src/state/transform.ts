// transformController: the generic A → B controller. It keeps one output resource per input
// resource in sync, so that "derive X from Y" needs a map function, not a hand-written loop.
//
// Each pass: every input in phase 'running' whose map returns a spec gets an output (same id
// unless outputId says otherwise) with that spec: created, updated when the spec changed, left
// alone otherwise. Outputs it owns that no input wants any more are torn down and destroyed;
// one that other parties hold with finalizers stays tearing down until they let go (the
// controller watches its output type, so that release triggers the next pass). An input that
// is tearing down counts as gone.

import type { Controller, ControllerContext } from './controller.ts';
import { type Resource, refString } from './resource.ts';

export interface TransformOptions<I, O> {
  /** The controller's name, owner of the outputs (e.g. 'HostnameStatusController'). */
  name: string;
  input: { namespace: string; type: string };
  output: { namespace: string; type: string };
  /** The output's spec for this input, or undefined for no output. Must be pure. */
  map: (input: Resource<I>) => O | undefined;
  /** The output's id; default the input's id. */
  outputId?: (input: Resource<I>) => string;
  /** Output labels; default none. */
  labels?: (input: Resource<I>) => Record<string, string>;
}

export function transformController<I = unknown, O = unknown>(opts: TransformOptions<I, O>): Controller {
  const { name, input, output, map } = opts;
  if (input.namespace === output.namespace && input.type === output.type) {
    throw new Error(`transform ${name}: input and output are both ${input.namespace}/${input.type}`);
  }
  const outputId = opts.outputId ?? ((r: Resource<I>) => r.metadata.id);
  return {
    name,
    inputs: [
      { namespace: input.namespace, type: input.type, kind: 'weak' },
      { namespace: output.namespace, type: output.type, kind: 'weak' },
    ],
    outputs: [{ type: output.type, kind: 'exclusive' }],
    async run(ctx: ControllerContext): Promise<void> {
      const desired = new Map<string, { spec: O; labels: Record<string, string>; from: string }>();
      for (const r of await ctx.state.list<I>(input.namespace, input.type)) {
        if (r.metadata.phase !== 'running') continue;
        const spec = map(r);
        if (spec === undefined) continue;
        const id = outputId(r);
        const other = desired.get(id);
        if (other) throw new Error(`inputs ${other.from} and ${refString(r.metadata)} both map to output id ${JSON.stringify(id)}`);
        desired.set(id, { spec, labels: opts.labels?.(r) ?? {}, from: refString(r.metadata) });
      }

      const existing = new Map<string, Resource<O>>();
      for (const r of await ctx.state.list<O>(output.namespace, output.type)) existing.set(r.metadata.id, r);

      for (const [id, want] of desired) {
        const cur = existing.get(id);
        if (cur?.metadata.phase === 'tearingDown') {
          // Wanted again while going away: finish the destroy first, recreate once it is gone.
          if (cur.metadata.finalizers.length > 0) continue;
          await ctx.state.destroy(output.namespace, output.type, id);
        }
        await ctx.state.apply(output.namespace, output.type, id, want.spec, { labels: want.labels });
      }

      for (const [id, cur] of existing) {
        if (desired.has(id) || cur.metadata.owner !== name) continue;
        await ctx.state.retire(cur);
      }
    },
  };
}
