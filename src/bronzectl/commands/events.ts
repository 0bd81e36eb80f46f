// `bronzectl events [--tail N] [--since-id ID] [--duration D] [--actor-id ID]`: the machine's
// event stream (sequences, phases, tasks, service states), one row per event as talosctl, until Ctrl-C.
import type { Command } from 'commander';
import type { protoRoot } from '../../contract/protos.ts';
import type { AnyMessage } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';
import { intArg } from '../args.ts';
import { StreamTable, parseGoDuration } from '../output.ts';
import { UserError } from '../session.ts';

type Obj = Record<string, any>;
type Root = ReturnType<typeof protoRoot>;

/** An event's payload decoded from its Any (types from `root`), or undefined when the type is unknown. */
export function decodePayload(root: Root, data: AnyMessage | null | undefined): { type: string; msg: Obj } | undefined {
  if (!data?.type_url) return undefined;
  const type = data.type_url.slice(data.type_url.lastIndexOf('/') + 1);
  try {
    const t = root.lookupType(type);
    return { type, msg: t.toObject(t.decode(data.value ?? Buffer.alloc(0)), { longs: String, enums: String, defaults: true }) as Obj };
  } catch {
    return undefined;
  }
}

/** talosctl's SOURCE and MESSAGE columns for an event payload. */
export function describe(type: string, m: Obj): [string, string] {
  switch (type) {
    case 'machine.SequenceEvent':
      return [m.sequence, m.error ? `error: ${m.error.message}` : m.action];
    case 'machine.PhaseEvent':
      return [m.phase, m.action];
    case 'machine.TaskEvent':
      return [m.task, m.action];
    case 'machine.ServiceStateEvent':
      return [m.service, `${m.action}: ${m.message}`];
    case 'machine.ConfigLoadErrorEvent':
    case 'machine.ConfigValidationErrorEvent':
      return ['error', m.error];
    case 'machine.AddressEvent':
      return [m.hostname, `ADDRESSES: ${(m.addresses ?? []).join(',')}`];
    case 'machine.MachineStatusEvent': {
      const unmet = (m.status?.unmet_conditions ?? []).map((c: Obj) => `${c.name}: ${c.reason}`);
      return [m.stage, `ready: ${!!m.status?.ready}, unmet conditions: [${unmet.join(' ')}]`];
    }
    case 'machine.RestartEvent':
      return ['restart', String(m.cmd)];
    default:
      return ['', ''];
  }
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('events')
    .description('Stream runtime events')
    .option('--tail <n>', 'show specified number of past events (-1: all kept)', intArg(-1), 0)
    .option('--since-id <id>', 'show events after the event with the specified ID')
    .option('--since <id>', 'same as --since-id (talosctl spelling)')
    .option('--duration <duration>', 'show events for the past duration interval (one second resolution, e.g. 10m)')
    .option('--actor-id <id>', 'filter events by the specified actor ID')
    .action(async (opts: { tail: number; sinceId?: string; since?: string; duration?: string; actorId?: string }) => {
      const s = ctx.session();
      let seconds = 0;
      if (opts.duration !== undefined) {
        try {
          seconds = Math.round(parseGoDuration(opts.duration) / 1000);
        } catch (e) {
          throw new UserError(`--duration: ${(e as Error).message}`);
        }
      }
      const root = (await load('protos')).protoRoot();
      const t = new StreamTable(['NODE', 'ID', 'EVENT', 'ACTOR', 'SOURCE', 'MESSAGE'], (x) => s.out(x));
      await s.streamFanOut(
        (c, o) =>
          c.machine.Events(
            { tail_events: opts.tail, tail_id: opts.sinceId ?? opts.since ?? '', tail_seconds: seconds, with_actor_id: opts.actorId ?? '' },
            o,
          ),
        (node, ev) => {
          const payload = decodePayload(root, ev.data);
          const [source, message] = payload ? describe(payload.type, payload.msg) : ['', ''];
          t.row([node, ev.id, ev.data?.type_url ?? '', ev.actor_id, String(source ?? ''), String(message ?? '')]);
        },
      );
    });
}
