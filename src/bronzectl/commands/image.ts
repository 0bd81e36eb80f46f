// `bronzectl image list|pull|import|remove` (alias images): talosctl's image commands over
// machine.ImageService, with talosctl's --namespace: `cri` (the default; on Bronze, where
// ContainerConfig containers take their images from) or `system`. `import <file>` (Bronze's;
// talosctl has it only inside `debug`) streams an OCI image archive to each node, for nodes
// without a registry. ImageService replies name no node, so each node is called on its own
// (`node` metadata), as talosctl does. Pull and import report progress on stderr
// (../progress.ts) and print `<node>: pulled image <name>` / `<node>: image imported <name>
// from <file>` on stdout, as talosctl.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Client } from '../../client/index.ts';
import type { ImageServiceListResponse__Output as ImageItem } from '../../contract/wire/machine/ImageServiceListResponse.ts';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';
import { humanizeBytes, nodeOfEndpoint, table } from '../output.ts';
import { ProgressLines } from '../progress.ts';
import { fileChunks } from './upgrade.ts';

type Namespace = 'cri' | 'system';

/** talosctl's --namespace as the request's common.ContainerdInstance. */
export function containerdInstance(namespace: string): { driver: 'CRI'; namespace: 'NS_CRI' | 'NS_SYSTEM' } {
  if (namespace === 'cri') return { driver: 'CRI', namespace: 'NS_CRI' };
  if (namespace === 'system') return { driver: 'CRI', namespace: 'NS_SYSTEM' };
  throw new UserError(`unsupported namespace "${namespace}": cri or system`);
}

/** Go's time.RFC3339 of a UTC time (talosctl's CREATED). */
export function rfc3339(ts: { seconds?: string | number; nanos?: number } | null | undefined): string {
  const d = new Date(Number(ts?.seconds ?? 0) * 1000);
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** talosctl's LABELS: k=v, sorted by key, comma-separated. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  return Object.keys(labels ?? {})
    .sort()
    .map((k) => `${k}=${labels![k]}`)
    .join(',');
}

/** The node a perNode call answered for: the one named, else the endpoint's node (as `get` names it, issue 17). */
function label(c: Client, target: string | undefined): string {
  return target ?? nodeOfEndpoint(c.currentEndpoint);
}

const CHUNK = 256 << 10;

export function register(program: Command, ctx: Ctx): void {
  const image = program
    .command('image')
    .alias('images')
    .description('Manage container images')
    .option('--namespace <namespace>', 'namespace to use: "cri" (the containers\' images) or "system"', 'cri');
  const instance = (cmd: Command) => containerdInstance((cmd.optsWithGlobals() as { namespace: Namespace }).namespace);

  image
    .command('list')
    .aliases(['l', 'ls'])
    .description("List images in the machine's container runtime")
    .action(async (_opts: unknown, cmd: Command) => {
      const containerd = instance(cmd);
      const s = ctx.session();
      const results: Array<{ target: string | undefined; rows: string[][] }> = [];
      await s.perNode(async (c, o, target) => {
        const images: ImageItem[] = [];
        for await (const img of c.image.List({ containerd }, o)) images.push(img);
        const node = label(c, target);
        results.push({ target, rows: images.map((img) => [node, img.name, img.digest, humanizeBytes(img.size), formatLabels(img.labels), rfc3339(img.created_at)]) });
      });
      // Nodes in the order named (as `get`), not in the order they answered.
      const order = await s.nodes();
      results.sort((a, b) => order.indexOf(a.target ?? '') - order.indexOf(b.target ?? ''));
      const rows = results.flatMap((r) => r.rows);
      if (rows.length > 0) s.out(table([['NODE', 'IMAGE', 'DIGEST', 'SIZE', 'LABELS', 'CREATED'], ...rows]));
    });

  image
    .command('pull')
    .alias('p')
    .description("Pull an image into the machine's container runtime")
    .argument('<image>')
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      const containerd = instance(cmd);
      const s = ctx.session();
      await s.perNode(async (c, o, target) => {
        // One progress line per layer, each at every tenth of it.
        const layers = new Map<string, ProgressLines>();
        let name = '';
        for await (const msg of c.image.Pull({ containerd, image_ref: ref }, o)) {
          const p = msg.pull_progress;
          if (p?.progress) {
            let lines = layers.get(p.layer_id);
            if (!lines) {
              const node = target ?? '';
              layers.set(p.layer_id, (lines = new ProgressLines((l) => s.warn(node ? `${node}: ${l}` : l))));
            }
            lines.report(p.layer_id, p.progress.status === 'DOWNLOAD_COMPLETE' ? 'downloaded' : '', p.progress.offset, p.progress.total);
          } else if (msg.name) {
            name = msg.name;
          }
        }
        s.out(`${label(c, target)}: pulled image ${name || ref}\n`);
      });
    });

  image
    .command('import')
    .description("Import an image archive (OCI layout as tar, optionally gzip) into the machine's container runtime")
    .argument('<file>')
    .action(async (arg: string, _opts: unknown, cmd: Command) => {
      const containerd = instance(cmd);
      const file = path.resolve(ctx.io.cwd, arg);
      let size: number;
      try {
        const st = fs.statSync(file);
        if (!st.isFile()) throw new UserError(`failed to open image tarball: ${arg}: not a file`);
        size = st.size;
      } catch (e) {
        if (e instanceof UserError) throw e;
        throw new UserError(`failed to open image tarball: ${(e as Error).message}`);
      }
      const s = ctx.session();
      await s.perNode(async (c, o, target) => {
        const node = target ?? '';
        const lines = new ProgressLines((l) => s.warn(node ? `${node}: ${l}` : l));
        const requests = async function* () {
          yield { containerd };
          for await (const bytes of fileChunks(file, size, CHUNK, lines)) yield { image_chunk: { bytes } };
        };
        let name = '';
        for await (const reply of c.image.Import(requests(), o)) name = reply.name;
        s.out(`${label(c, target)}: image imported ${name} from ${arg}\n`);
      });
    });

  image
    .command('remove')
    .alias('rm')
    .description("Remove an image from the machine's container runtime")
    .argument('<image>')
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      const containerd = instance(cmd);
      const s = ctx.session();
      await s.perNode(async (c, o) => {
        await c.image.Remove({ containerd, image_ref: ref }, o);
      });
    });
}
