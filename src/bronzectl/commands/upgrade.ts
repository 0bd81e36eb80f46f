// `bronzectl upgrade --image <url|file> [--preserve] [--stage] [--force]`: upgrades one node.
// An http(s):// URL is fetched by the node; anything else is a local upgrade image that
// bronzectl sends itself (UpgradeStream), 1 MiB at a time and only as fast as the node takes
// it. Progress goes to stderr (a line per stage, and per tenth of a transfer), the outcome to
// stdout; the node reboots into the new image once the stream ends without an error.
// With --wait (talosctl's), bronzectl follows the node through the reboot until the new slot is
// committed and, on a control plane, etcd is healthy again (upgrade-impl.ts).
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { type ProgressLines, followProgress } from '../progress.ts';
import { UserError } from '../session.ts';
import { goDurationMs } from '../../lib/duration.ts';
import { load } from '../lazy.ts';
import type { UpgradeRequest } from '../../contract/wire/machine/UpgradeRequest.ts';
import type { UpgradeStreamRequest } from '../../contract/wire/machine/UpgradeStreamRequest.ts';

const CHUNK = 1 << 20;
const URL_RE = /^https?:\/\//i;

/**
 * UpgradeStream's requests: from req.image (a URL) when `image` is undefined, else from the bytes
 * of `image` (`size` of them), pulled as the node takes them.
 */
export async function* upgradeRequests(req: UpgradeRequest, image?: { size: number; chunks: AsyncIterable<Buffer> }): AsyncGenerator<UpgradeStreamRequest> {
  yield image ? { request: { ...req, image: '' }, size: image.size } : { request: req };
  if (image) for await (const chunk of image.chunks) yield { chunk };
}

/**
 * The bytes of a local file (`size` of them), `chunkSize` at a time, read only as fast as they
 * are taken, with upload progress: stage `upload`, at the start and after each chunk is taken.
 * Shared by `upgrade --image <file>` and `image import`.
 */
export async function* fileChunks(file: string, size: number, chunkSize: number, progress: ProgressLines): AsyncGenerator<Buffer> {
  let sent = 0;
  progress.report('upload', '', 0, size);
  for await (const chunk of fs.createReadStream(file, { highWaterMark: chunkSize }) as AsyncIterable<Buffer>) {
    yield chunk;
    sent += chunk.length;
    progress.report('upload', '', sent, size);
  }
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('upgrade')
    .description('Upgrade Bronze on the target node (from a URL the node fetches, or a local upgrade image bronzectl sends)')
    .requiredOption('-i, --image <url|file>', 'the upgrade image: an http:// or https:// URL, or a local file')
    .option('--preserve', 'preserve data (EPHEMERAL, /var) across the upgrade')
    .option('--stage', 'stage the upgrade to perform it after a reboot')
    .option('-f, --force', 'force the upgrade (skip checks on etcd health and members, might lead to data loss)')
    .option('--wait', 'wait for the node to reboot into the new image, commit it and, on a control plane, for etcd to be healthy again')
    .option('--timeout <duration>', 'how long --wait waits', '30m')
    .action(async (opts: { image: string; preserve?: boolean; stage?: boolean; force?: boolean; wait?: boolean; timeout: string }) => {
      const s = ctx.session();
      const waitMs = goDurationMs(opts.timeout);
      if (waitMs === undefined || waitMs <= 0) throw new UserError(`--timeout ${JSON.stringify(opts.timeout)}: expected a duration such as 10m or 1h`);
      const req = { image: opts.image, preserve: !!opts.preserve, stage: !!opts.stage, force: !!opts.force };
      const done = async ({ rebooting }: { rebooting: boolean }) => {
        if (!opts.wait || s.failed) return;
        if (!rebooting) {
          s.warn('the node does not reboot now (a staged upgrade): nothing to wait for');
          return;
        }
        const [node] = await s.nodes();
        const client = await s.client();
        const { node: nodeMetadata } = await load('client');
        const { clientDeps, waitForUpgrade } = await load('upgrade');
        const base = s.callOptions(node ? { metadata: nodeMetadata(node) } : {});
        const label = node ?? client.currentEndpoint;
        try {
          await waitForUpgrade(clientDeps(client, base, (l) => s.warn(l)), label, waitMs);
        } catch (e) {
          s.fail('', (e as Error).message);
        }
      };
      if (URL_RE.test(opts.image)) {
        await done(await followProgress(s, 'upgrade', (c, o) => c.machine.UpgradeStream(upgradeRequests(req), o)));
        return;
      }
      const file = path.resolve(ctx.io.cwd, opts.image);
      let size: number;
      try {
        const st = fs.statSync(file);
        if (!st.isFile()) throw new UserError(`${opts.image}: not a file (give an upgrade image file, or an http:// or https:// URL)`);
        size = st.size;
      } catch (e) {
        if (e instanceof UserError) throw e;
        const code = (e as NodeJS.ErrnoException).code;
        throw new UserError(`${opts.image}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message} (give an upgrade image file, or an http:// or https:// URL)`);
      }
      if (size === 0) throw new UserError(`${opts.image}: empty file`);
      const r = await followProgress(
        s,
        'upgrade',
        (c, o, lines) => c.machine.UpgradeStream(upgradeRequests(req, { size, chunks: fileChunks(file, size, CHUNK, lines) }), o),
        // The node counts what it receives too; the upload lines say it already.
        new Set(['receive']),
      );
      await done(r);
    });
}
