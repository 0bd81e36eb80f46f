// Progress of a long operation (install, upgrade) as a few plain lines, not a spinner: a line
// when a stage starts or its message changes, and for a stage that counts bytes, a line each
// time another tenth is done (`upload 12.0/45.3 MiB`).
import type { CallOptions, Client } from '../client/client.ts';
import type { Progress } from '../client/types.ts';
import { UserError, clientLib, errorText, type Session } from './session.ts';

const MiB = 1 << 20;

/** How long the end of a stream is waited for after the node said it reboots. */
export const REBOOT_GRACE_MS = 15_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref?.());

/** Totals above this are bytes (shown in MiB); below, steps. */
const BYTES_ABOVE = 1024;

function amount(done: number, total: number): string {
  if (total > BYTES_ABOVE) return `${(done / MiB).toFixed(1)}/${(total / MiB).toFixed(1)} MiB`;
  return `${done}/${total}`;
}

export class ProgressLines {
  #stage: string | undefined;
  #message = '';
  #tenth = -1;

  constructor(private readonly write: (line: string) => void) {}

  /**
   * One progress report; done and total as the wire has them (decimal strings) or numbers.
   * Prints a line when the stage changes, when a counted stage reaches another tenth, or when
   * the message changes (for a counted stage: only once it is complete, so that a message
   * that changes with every report does not make a line each).
   */
  report(stage: string, message: string, done: number | string = 0, total: number | string = 0): void {
    const d = Number(done) || 0;
    const t = Number(total) || 0;
    const newStage = stage !== this.#stage;
    if (newStage) this.#tenth = -1;
    const newMessage = newStage || message !== this.#message;
    const tenth = t > 0 ? Math.min(10, Math.floor((d * 10) / t)) : -1;
    const counted = t > 0 && tenth > this.#tenth;
    const show = newStage || counted || (newMessage && (t <= 0 || d >= t));
    if (!show) return;
    this.#stage = stage;
    if (t > 0) {
      this.#tenth = Math.max(this.#tenth, tenth);
      const text = `${stage} ${amount(Math.min(d, t), t)}`;
      this.write(newMessage && message ? `${text}: ${message}` : text);
    } else {
      this.write(message ? `${stage}: ${message}` : stage);
    }
    this.#message = message;
  }
}

/**
 * Runs a progress stream (install, upgrade) against one node: -n names at most one (none: the
 * endpoint answers for itself). Progress goes to stderr as ProgressLines, the last message
 * (stage "reboot", or "staged" for an upgrade left for the next reboot) to stdout as `<node>: <message>`; an error is `<node>: <error>` and fails
 * the run. `skip` names stages not to print (e.g. the node's own count of an upload the CLI
 * already reports).
 */
export async function followProgress(
  s: Session,
  what: string,
  open: (c: Client, o: CallOptions, lines: ProgressLines) => AsyncIterable<Progress>,
  skip: ReadonlySet<string> = new Set(),
): Promise<{ rebooting: boolean }> {
  const targets = await s.nodes();
  if (targets.length > 1) {
    throw new UserError(`${what} works on one node at a time, but ${targets.length} are given (${targets.join(', ')}): pass one with -n/--nodes`);
  }
  const client = await s.client();
  const { node: nodeMetadata } = await clientLib();
  const lines = new ProgressLines((l) => s.warn(l));
  let label = (msg?: Progress) => s.label(client, targets, msg);
  let final: string | undefined;
  let rebooting = false;
  const grace = Number(s.io.env.BRONZECTL_REBOOT_GRACE_MS) || REBOOT_GRACE_MS; // tests shorten it
  const it = open(client, s.callOptions(targets.length ? { metadata: nodeMetadata(targets[0]!) } : {}), lines)[Symbol.asyncIterator]();
  try {
    for (;;) {
      // Once the node has said it reboots, the stream's end may be lost with its network (the
      // connection then goes silent rather than closing): it is done after a grace period.
      const next: IteratorResult<Progress> | undefined = rebooting ? await Promise.race([it.next(), sleep(grace).then(() => undefined)]) : await it.next();
      if (next === undefined) {
        void it.return?.();
        break;
      }
      if (next.done) break;
      const msg: Progress = next.value;
      const node = label(msg);
      label = () => node;
      if (msg.metadata?.error) {
        s.fail(node, msg.metadata.error);
        return { rebooting: false };
      }
      if (msg.stage === 'reboot' || msg.stage === 'staged') final = msg.message || `${what} done`;
      else if (!skip.has(msg.stage)) lines.report(msg.stage, msg.message, msg.done, msg.total);
      // The node's own last word: the stream ends right after it, and the node reboots.
      rebooting ||= msg.stage === 'reboot' && / rebooting/.test(msg.message);
    }
  } catch (e) {
    // The connection dropping as the node reboots, after it said so, is the expected end.
    if (!rebooting) {
      s.fail(label(), errorText(e));
      return { rebooting: false };
    }
  }
  if (s.signal?.aborted) {
    s.fail(label(), `${what} cancelled`);
    return { rebooting: false };
  }
  s.out(`${label()}: ${final ?? `${what} done`}\n`);
  return { rebooting };
}
