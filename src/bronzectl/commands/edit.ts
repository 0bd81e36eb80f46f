// `bronzectl edit machineconfig|mc [id] [--mode ...] [--dry-run] [--timeout 1m]`: for each node in
// turn, fetch the running configuration and open it in $BRONZE_EDITOR, else $EDITOR, else vi, in a
// temporary file (0600: the configuration holds the CA key) under a comment header. The comment
// lines at the top are dropped when the file is read back. An invalid result, found here or refused
// by the node (INVALID_ARGUMENT), re-opens the editor with the errors listed in the header, their
// line numbers those of the file being edited, as kubectl and talosctl do. The edit ends when the
// configuration is applied, or when the file is saved empty ("edit cancelled, empty file") or as
// it was fetched ("edit cancelled, no changes made"), both exit 0; saving an invalid edit again
// unchanged gives up on that node with its errors (exit 1). Nothing invalid ever reaches the node.
// The work itself is in edit-impl.ts, imported when the command runs.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';
import { MACHINE_CONFIG, addApplyOptions, applyOptions, checkMachineConfigTarget, type ApplyFlags } from './machineconfig.ts';

/** The editor command: $BRONZE_EDITOR, else $EDITOR, else vi. */
export function editorCommand(env: Record<string, string | undefined>): string {
  return (env.BRONZE_EDITOR || env.EDITOR || 'vi').trim() || 'vi';
}

/** The file's text without its leading comment lines. */
export function stripHeader(text: string): string {
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length && lines[i]!.startsWith('#')) i++;
  return lines.slice(i).join('\n');
}

export function register(program: Command, ctx: Ctx): void {
  const cmd = program
    .command('edit')
    .description('Edit the machine configuration of the nodes with $EDITOR and apply it')
    .argument('<type>', 'the resource to edit: machineconfig (mc)')
    .argument('[id]', `resource id (${MACHINE_CONFIG.id})`);
  addApplyOptions(cmd).action(async (typeName: string, id: string | undefined, opts: ApplyFlags) => {
    checkMachineConfigTarget(typeName, id);
    const req = applyOptions(opts);
    const editor = editorCommand(ctx.io.env);
    await (await load('edit')).editNodes(ctx, editor, req);
  });
}
