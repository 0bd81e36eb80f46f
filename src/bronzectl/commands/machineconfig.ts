// `bronzectl machineconfig patch <file> -p/--patch <patch>... [-o/--output <file>]`: patches a
// machine configuration file offline (strategic merge or RFC 6902, `@file` or inline) and prints
// the result, or writes it to --output; a result that is not a valid configuration is refused
// with every problem listed, and nothing is written.
//
// Also what `patch machineconfig` and `edit machineconfig` share: fetching a node's running
// configuration (config/MachineConfigs.config.talos.dev/v1alpha1) back into a YAML stream,
// validating, and applying it with a mode. The parts that need YAML, the patcher or the validator
// are in machineconfig-impl.ts, imported when a command runs.
import { Option, type Command } from 'commander';
import type { CallOptions, Client } from '../../client/client.ts';
import type { ApplyConfiguration, ApplyMode } from '../../client/types.ts';
import { definitionSpec } from '../../contract/resources/definition.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, machineConfigDefinition } from '../../contract/resources/machine-config.ts';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';
import { parseGoDuration } from '../output.ts';
import { UserError, type Session } from '../session.ts';

/** The running configuration's resource on a node (the MachineConfig definition). */
export const MACHINE_CONFIG = { namespace: MACHINE_CONFIG_NS, type: MACHINE_CONFIG_TYPE, id: MACHINE_CONFIG_ID } as const;

/** The names `patch` and `edit` take for it: the type and every alias, any case. */
const MACHINE_CONFIG_NAMES = new Set([MACHINE_CONFIG_TYPE.toLowerCase(), ...definitionSpec(machineConfigDefinition).allAliases]);

/** Checks the `<type> [id]` arguments of patch/edit: only the machine configuration can be changed. */
export function checkMachineConfigTarget(typeName: string, id: string | undefined): void {
  if (!MACHINE_CONFIG_NAMES.has(typeName.toLowerCase())) {
    throw new UserError(`${typeName}: only the machine configuration can be changed (machineconfig, mc)`);
  }
  if (id !== undefined && id !== MACHINE_CONFIG.id) throw new UserError(`${MACHINE_CONFIG.type}/${id}: no such resource (the id is ${MACHINE_CONFIG.id})`);
}

export const APPLY_MODES: Record<string, ApplyMode> = { auto: 'AUTO', 'no-reboot': 'NO_REBOOT', reboot: 'REBOOT', staged: 'STAGED', try: 'TRY' };

export interface ApplyFlags {
  mode: string;
  dryRun?: boolean;
  timeout: string;
}

/** The apply flags of patch/edit, as apply-config has them. */
export function addApplyOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('-m, --mode <mode>', 'apply config mode').choices(Object.keys(APPLY_MODES)).default('auto'))
    .option('--dry-run', 'check how the config change will be applied in dry-run mode')
    .option('--timeout <duration>', 'the config will be rolled back after specified timeout (if try mode is selected)', '1m');
}

/** The request options besides the data, checked before any node is contacted. */
export function applyOptions(flags: ApplyFlags): { mode: ApplyMode; dry_run: boolean; try_mode_timeout?: { seconds: number; nanos: number } } {
  let ms: number;
  try {
    ms = parseGoDuration(flags.timeout);
  } catch (e) {
    throw new UserError(`--timeout: ${(e as Error).message}`);
  }
  return {
    mode: APPLY_MODES[flags.mode]!,
    dry_run: !!flags.dryRun,
    ...(flags.mode === 'try' ? { try_mode_timeout: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 } } : {}),
  };
}

/**
 * ApplyConfiguration on one node (`o` carries its `node` metadata). Prints warnings and the mode
 * details as apply-config does; a reply item with an error throws it.
 */
export async function applyToNode(
  s: Session,
  c: Client,
  o: CallOptions,
  data: string,
  req: ReturnType<typeof applyOptions>,
  node: string,
): Promise<ApplyConfiguration[]> {
  const reply = await c.machine.ApplyConfiguration({ data: Buffer.from(data), ...req }, o);
  const msgs = reply.messages ?? [];
  for (const msg of msgs) {
    if (msg.metadata?.error) throw new Error(msg.metadata.error);
  }
  for (const msg of msgs) {
    const name = msg.metadata?.hostname || node;
    for (const w of msg.warnings ?? []) s.warn(`${name}: warning: ${w}`);
    if (msg.mode_details) s.warn(`${name}: ${msg.mode_details}`);
  }
  return msgs;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
export { collect as repeatableArg };

export function register(program: Command, ctx: Ctx): void {
  const mc = program
    .command('machineconfig')
    .alias('mc')
    .description('Machine config related commands');

  mc.command('patch')
    .description('Patch a machine config')
    .argument('<machineconfig-file>', 'the machine configuration file to patch')
    .option('-p, --patch <patch>', 'patch to apply: @file or inline YAML/JSON, strategic merge or RFC 6902 (repeatable)', collect)
    .option('-o, --output <path>', 'output destination; stdout when not given')
    .action(async (file: string, opts: { patch?: string[]; output?: string }) => {
      await (await load('machineconfig')).patchFile(ctx, file, opts);
    });
}
