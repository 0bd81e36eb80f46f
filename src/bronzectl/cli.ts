// bronzectl's command line: talosctl's commands, flags and output for what Bronze implements.
// run(argv, io) is the whole CLI, callable in-process (tests) and from main.ts (the binary).
//
// Exit codes: 0 success; 1 any failure, partial ones included (one node failed, the others
// answered); 2 bad usage (unknown command or flag, missing argument, bad flag value).
import { Command, CommanderError } from 'commander';
import { Session, errorText, type GlobalOptions, type IO } from './session.ts';
import { register as applyConfig } from './commands/apply-config.ts';
import { register as completion } from './commands/completion.ts';
import { register as config } from './commands/config.ts';
import { register as dmesg } from './commands/dmesg.ts';
import { register as edit } from './commands/edit.ts';
import { register as events } from './commands/events.ts';
import { register as gen } from './commands/gen.ts';
import { register as get } from './commands/get.ts';
import { register as install } from './commands/install.ts';
import { register as list } from './commands/list.ts';
import { register as logs } from './commands/logs.ts';
import { register as machineconfig } from './commands/machineconfig.ts';
import { register as memory } from './commands/memory.ts';
import { register as mounts } from './commands/mounts.ts';
import { register as patch } from './commands/patch.ts';
import { register as processes } from './commands/processes.ts';
import { register as read } from './commands/read.ts';
import { register as reboot } from './commands/reboot.ts';
import { register as reset } from './commands/reset.ts';
import { register as rollback } from './commands/rollback.ts';
import { register as service } from './commands/service.ts';
import { register as services } from './commands/services.ts';
import { register as shutdown } from './commands/shutdown.ts';
import { register as time } from './commands/time.ts';
import { register as upgrade } from './commands/upgrade.ts';
import { register as validate } from './commands/validate.ts';
import { register as version } from './commands/version.ts';

export type { IO } from './session.ts';
export { intArg, listArg } from './args.ts';
import { listArg } from './args.ts';

/** What a command's registration gets: the IO, and the per-run session built from the global flags. */
export interface Ctx {
  io: IO;
  session(): Session;
}

/** Every command, in the order `bronzectl --help` lists them. */
const COMMANDS: ReadonlyArray<(program: Command, ctx: Ctx) => void> = [
  applyConfig,
  completion,
  config,
  dmesg,
  edit,
  events,
  gen,
  get,
  install,
  list,
  logs,
  machineconfig,
  memory,
  mounts,
  patch,
  processes,
  read,
  reboot,
  reset,
  rollback,
  service,
  services,
  shutdown,
  time,
  upgrade,
  validate,
  version,
];

/** Commander error codes that mean the command line itself was wrong. */
const USAGE_ERRORS = new Set([
  'commander.unknownOption',
  'commander.unknownCommand',
  'commander.missingArgument',
  'commander.optionMissingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.excessArguments',
  'commander.invalidArgument',
  'commander.conflictingOption',
  'commander.help',
]);

export function buildProgram(ctx: Ctx): Command {
  const program = new Command('bronzectl');
  program
    .description('A CLI for out-of-band management of Bronze nodes (talosctl-compatible commands and output)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void ctx.io.stdout.write(s),
      writeErr: (s) => void ctx.io.stderr.write(s),
    })
    .showHelpAfterError('(run with --help for usage)')
    .showSuggestionAfterError(true)
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .option('--bronzeconfig <path>', 'the path to the client config file ($BRONZECONFIG, else $XDG_CONFIG_HOME/bronze/config.yaml, else ~/.bronze/config)')
    .option('--context <name>', 'context to be used in command')
    .option('-e, --endpoints <endpoints>', 'override default endpoints in the client config (repeatable, comma-separated)', listArg)
    .option('-n, --nodes <nodes>', 'target the specified nodes (repeatable, comma-separated)', listArg);
  for (const register of COMMANDS) register(program, ctx);
  return program;
}

function defaultIO(): IO {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** Runs bronzectl with `argv` (without the program name); resolves to the exit code. */
export async function run(argv: string[], io: Partial<IO> = {}): Promise<number> {
  const fullIO: IO = { ...defaultIO(), ...io };
  let program: Command | undefined;
  let session: Session | undefined;
  const ctx: Ctx = {
    io: fullIO,
    session: () => {
      if (!session) {
        const o = program!.opts<Partial<GlobalOptions>>();
        session = new Session(fullIO, {
          ...(o.bronzeconfig ? { bronzeconfig: o.bronzeconfig } : {}),
          ...(o.context ? { context: o.context } : {}),
          endpoints: o.endpoints ?? [],
          nodes: o.nodes ?? [],
        });
      }
      return session;
    },
  };
  program = buildProgram(ctx);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return 0;
      return USAGE_ERRORS.has(e.code) ? 2 : e.exitCode;
    }
    fullIO.stderr.write(`${errorText(e)}\n`);
    return 1;
  } finally {
    session?.close();
  }
  return session?.failed ? 1 : 0;
}
