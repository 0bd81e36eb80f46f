// What `bronzectl edit` does once it runs (see edit.ts): fetch, edit, validate and apply each
// node's configuration in turn. Imported when the command runs, not when bronzectl starts.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { CallOptions, Client } from '../../client/client.ts';
import { RpcError } from '../../client/errors.ts';
import { node as nodeMetadata } from '../../client/metadata.ts';
import { formatIssues, type ConfigIssue } from '../../config/validate.ts';
import type { Ctx } from '../session.ts';
import { errorText, UserError, type Session } from '../session.ts';
import { stripHeader } from './edit.ts';
import { configIssues, fetchConfig } from './machineconfig-impl.ts';
import { MACHINE_CONFIG, applyOptions, applyToNode } from './machineconfig.ts';

// What commands get from `load('edit')` (lazy.ts): named here, not in lazy.ts, so that lazy.ts
// names no command file (the commands import it: that would be an import circle).
declare module '../lazy.ts' {
  interface LazyModules {
    edit: {
      editNodes: typeof editNodes;
    };
  }
}

/** Arguments an editor command can be split into without a shell. */
const PLAIN_COMMAND = /^[\w./~:=@+,-]+(\s+[\w./~:=@+,-]+)*$/;

/** Runs the editor on `file` with the terminal; a command with shell syntax goes through sh. */
async function runEditor(command: string, file: string, env: Record<string, string | undefined>): Promise<void> {
  const [cmd, ...args]: string[] = PLAIN_COMMAND.test(command) ? [...command.split(/\s+/), file] : ['/bin/sh', '-c', `${command} "$1"`, 'sh', file];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(cmd!, args, { stdio: 'inherit', env });
    child.on('error', (e) => reject(new Error(`editor ${JSON.stringify(command)}: ${e.message}`)));
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`editor ${JSON.stringify(command)} ${signal ? `killed by ${signal}` : `exited with status ${code}`}, nothing applied`));
    });
  });
}

/** The header above the configuration; `errors` (already formatted lines) when re-opened. */
function header(node: string, errors: readonly string[]): string[] {
  const lines = [
    `# Editing ${MACHINE_CONFIG.type}/${MACHINE_CONFIG.id} at node ${node}`,
    '#',
    "# Lines at the top starting with '#' are ignored, and an empty file cancels the edit.",
    '# If the configuration is invalid, this file is re-opened with the errors listed here.',
  ];
  if (errors.length > 0) lines.push('#', '# The configuration is not valid:', ...errors.map((e) => `#   ${e}`));
  lines.push('#');
  return lines;
}

/** The file to show: the header with the validator's issues, their lines shifted past the header. */
function fileText(node: string, content: string, issues: readonly ConfigIssue[], refusal: string | undefined): string {
  const errorLines = (shift: number): string[] => [
    ...(issues.length > 0 ? formatIssues(issues.map((i) => ({ ...i, line: i.line + shift }))).split('\n') : []),
    ...(refusal ? refusal.split('\n') : []),
  ];
  const shift = header(node, errorLines(0)).length;
  return `${header(node, errorLines(shift)).join('\n')}\n${content}`;
}

type Outcome = 'applied' | 'cancelled';

async function editNode(s: Session, c: Client, o: CallOptions, node: string, editor: string, req: ReturnType<typeof applyOptions>): Promise<Outcome> {
  const original = await fetchConfig(c, o);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bronzectl-edit-'));
  const file = path.join(dir, 'machineconfig.yaml');
  try {
    let shown = original;
    let issues: ConfigIssue[] = [];
    let refusal: string | undefined;
    for (;;) {
      await writeFile(file, fileText(node, shown, issues, refusal), { mode: 0o600 });
      await runEditor(editor, file, s.io.env);
      const edited = stripHeader(await readFile(file, 'utf8'));
      if (edited.trim() === '') {
        s.warn(`${node}: edit cancelled, empty file`);
        return 'cancelled';
      }
      if (edited.trim() === original.trim()) {
        s.warn(`${node}: edit cancelled, no changes made`);
        return 'cancelled';
      }
      if (edited === shown) {
        const why = issues.length > 0 ? formatIssues(issues) : (refusal ?? '');
        throw new Error(`edit cancelled, the configuration is still not valid, nothing applied:\n  ${why.split('\n').join('\n  ')}`);
      }
      shown = edited;
      refusal = undefined;
      issues = configIssues(edited);
      if (issues.length > 0) continue;
      try {
        await applyToNode(s, c, o, edited, req, node);
      } catch (e) {
        if (e instanceof RpcError && e.code === grpc.status.INVALID_ARGUMENT) {
          refusal = `refused by the node: ${e.details}`;
          continue;
        }
        throw e;
      }
      s.out(`edited ${MACHINE_CONFIG.type}/${MACHINE_CONFIG.id} at the node ${node}\n`);
      return 'applied';
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Edits the configuration of each target node in turn (each gets the terminal for its editor). */
export async function editNodes(ctx: Ctx, editor: string, req: ReturnType<typeof applyOptions>): Promise<void> {
  const s = ctx.session();
  const targets = await s.nodes();
  const client = await s.client();
  // One node at a time: each gets the terminal for its editor.
  for (const target of targets.length > 0 ? targets : [undefined]) {
    if (s.signal?.aborted) break;
    const o = s.callOptions(target !== undefined ? { metadata: nodeMetadata(target) } : {});
    try {
      await editNode(s, client, o, target ?? client.currentEndpoint, editor, req);
    } catch (e) {
      if (e instanceof UserError) throw e;
      s.fail(target ?? client.currentEndpoint, errorText(e));
    }
  }
}
