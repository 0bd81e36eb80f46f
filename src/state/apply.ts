// Create-or-update, the one write path for "make this resource have this spec": used by
// controllers (controller.ts) and by daemons publishing (daemon/publisher.ts's StatePublisher,
// over a State in their own process or over machined's socket, daemon/remote-state.ts). It
// reads the current resource, creates it when absent, updates it when the spec or labels
// differ, and does not write at all when they match (the version stays).
import { jsonEqual, newResource, type Resource } from './resource.ts';

/** Where the resource lives: the three calls create-or-update needs. */
export interface ApplyTarget<S> {
  find(): Promise<Resource<S> | undefined>;
  create(r: Resource<S>): Promise<Resource<S> | void>;
  /** `current` is what was read: its version, for an update that must not lose a race. */
  update(r: Resource<S>, current: Resource<S>): Promise<Resource<S> | void>;
}

export interface ApplyOptions {
  /** The labels to set; undefined keeps the current ones (none on create). */
  labels?: Record<string, string>;
  /** Also write when the stored owner differs (a controller taking over its output). */
  owner?: string;
}

/**
 * The spec as a reader would see it after a round trip through JSON or YAML (undefined fields
 * gone), so that a spec read back compares equal to the one written.
 */
const comparable = (spec: unknown): unknown => (spec === undefined ? null : JSON.parse(JSON.stringify(spec)));

/** True when the stored resource already has this spec and these labels. */
export function unchanged(current: Resource<unknown>, spec: unknown, labels: Record<string, string>, owner?: string): boolean {
  return jsonEqual(comparable(current.spec), comparable(spec)) && jsonEqual(current.metadata.labels, labels) && (owner === undefined || current.metadata.owner === owner);
}

/** Creates, updates or leaves alone; returns what is stored when the target says (undefined otherwise). */
export async function createOrUpdate<S>(t: ApplyTarget<S>, ref: { namespace: string; type: string; id: string }, spec: S, o: ApplyOptions = {}): Promise<Resource<S> | undefined> {
  const current = await t.find();
  if (!current) return (await t.create(newResource(ref.namespace, ref.type, ref.id, spec, { labels: { ...(o.labels ?? {}) } }))) ?? undefined;
  const labels = o.labels ?? current.metadata.labels;
  if (unchanged(current, spec, labels, o.owner)) return current;
  return (await t.update({ metadata: { ...current.metadata, labels: { ...labels } }, spec }, current)) ?? undefined;
}
