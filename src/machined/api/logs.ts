// Logs: the captured output of a supervised service, or machined's own log (id 'machined').
// Each line is one common.Data whose bytes are the line and its newline, so that the chunks
// concatenate into the log. tail_lines as Talos: N >= 0 → the last N lines (0: none, only what
// follows), negative → everything kept. follow streams new lines until the client cancels.
// Namespace as Talos's: `system` (what talosctl sends; unset too, as Bronze's older clients
// did) names a service; any other containerd namespace (`taloscontainers`, `k8s.io`) names a
// container in it, whose log the container runtime streams in the chunks it reads (checked as
// Containers checks it: ./containers.ts).

import type * as grpc from '@grpc/grpc-js';
import { invalidArgument, notFound, serverStream, type Stream } from './common.ts';
import { type WorkloadsSource, containerId, containerNamespace, runtimeOf } from './containers.ts';
import { MACHINED_ID } from './services.ts';

/** machined's own log (KmsgLogger). */
export interface LogSource {
  lines(): string[];
  follow(onLine: (line: string) => void): () => void;
}

/** What Logs needs of the supervisor. */
export interface ServiceLogSource {
  get(id: string): unknown;
  logs(id: string): string[];
  followLogs(id: string, onLine: (line: string) => void): () => void;
}

export interface LogsRequest {
  namespace?: string;
  id?: string;
  driver?: string | number;
  follow?: boolean;
  tail_lines?: number;
}

/** The lines to replay for a tail_lines value. */
export function tailLines(lines: readonly string[], tail: number): string[] {
  if (tail < 0) return [...lines];
  return tail === 0 ? [] : lines.slice(-tail);
}

/** The containerd namespace that names services' logs here (Talos's; not the services' resource namespace). */
const SERVICE_LOGS_NAMESPACE = 'system';

/**
 * A container's log, streamed as the runtime reads it. An unknown container is the runtime's
 * NOT_FOUND (naming it and its namespace), thrown at the first read; an error once the client
 * is gone ends nothing more (Stream.fail is a no-op then).
 */
async function containerLogs(workloads: WorkloadsSource | undefined, req: LogsRequest, stream: Stream<{ bytes: Buffer }>): Promise<void> {
  const ns = containerNamespace(req.namespace, req.driver);
  const id = containerId(req.id);
  const chunks = runtimeOf(workloads).logs(ns, id, { follow: !!req.follow, tailLines: Number(req.tail_lines ?? 0), signal: stream.signal });
  for await (const chunk of chunks) {
    if (stream.closed) break;
    await stream.send({ bytes: Buffer.from(chunk) });
  }
}

export function logsHandlers(deps: { supervisor: ServiceLogSource; log: LogSource; workloads?: WorkloadsSource }): Record<string, grpc.handleServerStreamingCall<any, any>> {
  const source = (id: string): LogSource => {
    if (id === MACHINED_ID) return deps.log;
    if (!deps.supervisor.get(id)) throw notFound(`no logs for ${JSON.stringify(id)}: no such service (a container's log is in its namespace: taloscontainers)`);
    return { lines: () => deps.supervisor.logs(id), follow: (fn) => deps.supervisor.followLogs(id, fn) };
  };
  const data = (line: string) => ({ bytes: Buffer.from(`${line}\n`) });

  return {
    Logs: serverStream<LogsRequest, { bytes: Buffer }>(async (req, stream) => {
      const id = req.id ?? '';
      const ns = req.namespace ?? '';
      if (ns !== '' && ns !== SERVICE_LOGS_NAMESPACE) return containerLogs(deps.workloads, req, stream);
      if (id === '') throw invalidArgument('log id is required (a service id, or machined)');
      const src = source(id);
      const history = tailLines(src.lines(), Number(req.tail_lines ?? 0));
      if (!req.follow) {
        for (const line of history) await stream.send(data(line));
        return;
      }
      // Subscribe in the same tick as the snapshot, so no line falls between them; lines that
      // arrive while the history is being sent wait their turn.
      let pending: string[] | undefined = [];
      const unsubscribe = src.follow((line) => {
        if (pending) pending.push(line);
        else stream.push(data(line));
      });
      try {
        for (const line of history) await stream.send(data(line));
        while (pending.length > 0 && !stream.closed) {
          const batch: string[] = pending.splice(0);
          for (const line of batch) await stream.send(data(line));
        }
        pending = undefined;
        await stream.untilCancelled();
      } finally {
        unsubscribe();
      }
    }),
  };
}
