// `bronzectl patch machineconfig|mc [id] -p/--patch <patch>... [--mode ...] [--dry-run] [--timeout 1m]`:
// for each node, concurrently: fetch the running configuration, apply the patches locally, validate
// the result, then ApplyConfiguration with the mode. A patch that does not apply, or a result that is
// not valid, is reported for that node and nothing is sent to it; a result equal to the running
// configuration is not sent either ("no changes detected").
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';
import { MACHINE_CONFIG, addApplyOptions, applyOptions, applyToNode, checkMachineConfigTarget, repeatableArg, type ApplyFlags } from './machineconfig.ts';

interface Flags extends ApplyFlags {
  patch?: string[];
  patchFile?: string[];
}

export function register(program: Command, ctx: Ctx): void {
  const cmd = program
    .command('patch')
    .description('Patch the machine configuration of the nodes (strategic merge or RFC 6902) and apply it')
    .argument('<type>', 'the resource to patch: machineconfig (mc)')
    .argument('[id]', `resource id (${MACHINE_CONFIG.id})`)
    .option('-p, --patch <patch>', 'patch to apply: @file or inline YAML/JSON, strategic merge or RFC 6902 (repeatable)', repeatableArg)
    .option('--patch-file <path>', 'a file to read a patch from (repeatable; same as --patch @<path>)', repeatableArg);
  addApplyOptions(cmd).action(async (typeName: string, id: string | undefined, opts: Flags) => {
    checkMachineConfigTarget(typeName, id);
    const [{ applyPatches, PatchError }, { configIssues, fetchConfig, issuesText, readPatches, sameConfig }] = await Promise.all([load('configPatch'), load('machineconfig')]);
    const patches = readPatches(ctx.io.cwd, opts.patch ?? [], opts.patchFile ?? []);
    const req = applyOptions(opts);
    const s = ctx.session();
    await s.perNode(async (c, o, target) => {
      const current = await fetchConfig(c, o);
      const node = target ?? c.currentEndpoint;
      let patched: string;
      try {
        patched = applyPatches(current, patches);
      } catch (e) {
        if (e instanceof PatchError) {
          s.fail(node, `patch not applied: ${e.message}`);
          return;
        }
        throw e;
      }
      const issues = configIssues(patched);
      if (issues.length > 0) {
        s.fail(node, `the patched configuration is not valid, nothing applied: ${issuesText(issues)}`);
        return;
      }
      if (sameConfig(current, patched)) {
        s.out(`${node}: apply was skipped: no changes detected\n`);
        return;
      }
      await applyToNode(s, c, o, patched, req, node);
      s.out(`patched ${MACHINE_CONFIG.type}/${MACHINE_CONFIG.id} at the node ${node}\n`);
    });
  });
}
