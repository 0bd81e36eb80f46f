// The work of `bronzectl copy` (commands/cp.ts), imported when the command runs.
import fs from 'node:fs';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';
import { extractTarGz } from '../untar.ts';

// What commands get from `load('cp')` (lazy.ts): named here, not in lazy.ts, so that lazy.ts
// names no command file (the commands import it: that would be an import circle).
declare module '../lazy.ts' {
  interface LazyModules {
    cp: {
      copy: typeof copy;
    };
  }
}

export async function copy(ctx: Ctx, src: string, local: string): Promise<void> {
  const s = ctx.session();
  const targets = await s.nodes();
  if (targets.length > 1) throw new UserError('"copy" command is not supported with multiple nodes');
  if (local !== '-') {
    const st = fs.statSync(local, { throwIfNoEntry: false });
    if (st && !st.isDirectory()) throw new UserError(`local path ${JSON.stringify(local)} should be a directory`);
    if (!st) fs.mkdirSync(local, { recursive: true });
  }
  // The archive's chunks, in order, handed on as they come.
  const chunks: Buffer[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  async function* feed(): AsyncGenerator<Buffer> {
    for (;;) {
      if (chunks.length) yield chunks.shift()!;
      else if (done) return;
      else await new Promise<void>((r) => (wake = r));
    }
  }
  const extracting = local === '-' ? undefined : extractTarGz(feed(), local);
  await s.streamFanOut(
    (c, o) => c.machine.Copy({ root_path: src }, o),
    (_node, msg) => {
      if (!msg.bytes?.length) return;
      if (local === '-') s.out(msg.bytes);
      else {
        chunks.push(msg.bytes);
        wake?.();
      }
    },
  );
  done = true;
  wake?.();
  if (extracting) {
    try {
      await extracting;
    } catch (err) {
      if (!s.failed) throw new UserError(`extracting into ${local}: ${(err as Error).message}`);
    }
  }
}
