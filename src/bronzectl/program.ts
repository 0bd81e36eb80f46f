// bronzectl's command line: talosctl's commands, flags and output for what Bronze implements.
// The command tree and the run loop, shared by the full CLI (cli.ts: what tests call, and the
// bundle main.ts starts) and the front (front.ts: what the single executable and
// bin/bronzectl.mjs start). Nothing imported from here loads the API client or any heavy
// library: the commands get those through lazy.ts when they run.
//
// Exit codes: 0 success; 1 any failure, partial ones included (one node failed, the others
// answered); 2 bad usage (unknown command or flag, missing argument, bad flag value).
import { Command, CommanderError } from 'commander';
import { Session, errorText, type Ctx, type GlobalOptions, type IO } from './session.ts';
import { listArg } from './args.ts';
import { register as applyConfig } from './commands/apply-config.ts';
import { register as completion } from './commands/completion.ts';
import { register as config } from './commands/config.ts';
import { register as containers } from './commands/containers.ts';
import { register as bootstrap } from './commands/bootstrap.ts';
import { register as cgroups } from './commands/cgroups.ts';
import { register as cluster } from './commands/cluster.ts';
import { register as cp } from './commands/cp.ts';
import { register as dmesg } from './commands/dmesg.ts';
import { register as edit } from './commands/edit.ts';
import { register as etcd } from './commands/etcd.ts';
import { register as events } from './commands/events.ts';
import { register as gen } from './commands/gen.ts';
import { register as get } from './commands/get.ts';
import { register as health } from './commands/health.ts';
import { register as image } from './commands/image.ts';
import { register as inspect } from './commands/inspect.ts';
import { register as install } from './commands/install.ts';
import { register as list } from './commands/list.ts';
import { register as logs } from './commands/logs.ts';
import { register as machineconfig } from './commands/machineconfig.ts';
import { register as memory } from './commands/memory.ts';
import { register as meta } from './commands/meta.ts';
import { register as mounts } from './commands/mounts.ts';
import { register as netstat } from './commands/netstat.ts';
import { register as patch } from './commands/patch.ts';
import { register as pcap } from './commands/pcap.ts';
import { register as processes } from './commands/processes.ts';
import { register as read } from './commands/read.ts';
import { register as reboot } from './commands/reboot.ts';
import { register as repair } from './commands/repair.ts';
import { register as reset } from './commands/reset.ts';
import { register as restart } from './commands/restart.ts';
import { register as rollback } from './commands/rollback.ts';
import { register as service } from './commands/service.ts';
import { register as services } from './commands/services.ts';
import { register as shutdown } from './commands/shutdown.ts';
import { register as stats } from './commands/stats.ts';
import { register as time } from './commands/time.ts';
import { register as upgrade } from './commands/upgrade.ts';
import { register as usage } from './commands/usage.ts';
import { register as validate } from './commands/validate.ts';
import { register as version } from './commands/version.ts';


type Register = (program: Command, ctx: Ctx) => void;

/**
 * Every command, in the order `bronzectl --help` lists them, with the names (name, aliases) that
 * select it on the command line; [] for one that needs the whole tree (completion prints it).
 * A run whose command is named here registers only that command (the others would only cost
 * time); anything else (help, an unknown word, no command) registers them all.
 */
export const COMMANDS: ReadonlyArray<readonly [names: readonly string[], register: Register]> = [
  [['apply-config'], applyConfig],
  [['bootstrap'], bootstrap],
  [['cgroups', 'cg'], cgroups],
  [['cluster'], cluster],
  [[], completion],
  [['config'], config],
  [['containers', 'c'], containers],
  [['copy', 'cp'], cp],
  [['dmesg'], dmesg],
  [['edit'], edit],
  [['etcd'], etcd],
  [['events'], events],
  [['gen'], gen],
  [['get'], get],
  [['health'], health],
  [['image', 'images'], image],
  [['inspect'], inspect],
  [['install'], install],
  [['list', 'ls'], list],
  [['logs'], logs],
  [['machineconfig', 'mc'], machineconfig],
  [['memory', 'free'], memory],
  [['meta'], meta],
  [['mounts', 'df'], mounts],
  [['netstat', 'ss'], netstat],
  [['patch'], patch],
  [['pcap', 'tcpdump'], pcap],
  [['processes', 'ps'], processes],
  [['read', 'cat'], read],
  [['reboot'], reboot],
  [['repair'], repair],
  [['reset'], reset],
  [['restart'], restart],
  [['rollback'], rollback],
  [['service'], service],
  [['services'], services],
  [['shutdown'], shutdown],
  [['stats'], stats],
  [['time'], time],
  [['upgrade'], upgrade],
  [['usage', 'du'], usage],
  [['validate'], validate],
  [['version'], version],
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

function rootCommand(ctx: Ctx): Command {
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
  return program;
}

/**
 * The command `argv` runs, found as commander will find it: the first word after the global
 * flags (and their values). Undefined when that is not certain: an unknown flag before it
 * (-h, --help, a typo), `--`, or no word at all.
 */
export function commandWord(program: Command, argv: readonly string[]): string | undefined {
  const takesValue = new Set(program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.short, o.long].filter((f): f is string => !!f)));
  const flags = new Set(program.options.flatMap((o) => [o.short, o.long].filter((f): f is string => !!f)));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-') return arg;
    if (takesValue.has(arg)) i++; // `-n a`, `--nodes a`
    else if (/^--[^=]+=/.test(arg) && takesValue.has(arg.slice(0, arg.indexOf('=')))) continue; // `--nodes=a`
    else if (/^-[^-]./.test(arg) && takesValue.has(arg.slice(0, 2))) continue; // `-na`
    else if (!flags.has(arg)) return undefined;
  }
  return undefined;
}

/** The program with every command, or with only the one `argv` runs when that is known. */
export function buildProgram(ctx: Ctx, argv?: readonly string[]): Command {
  const program = rootCommand(ctx);
  const word = argv && commandWord(program, argv);
  const only = word !== undefined ? COMMANDS.find(([names]) => names.includes(word)) : undefined;
  for (const [, register] of only ? [only] : COMMANDS) register(program, ctx);
  return program;
}

function defaultIO(): IO {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** What runProgram resolves to in the front when the command must run in the full CLI. */
export const HAND_OFF = Symbol('hand off to the full CLI');

/** Thrown by the front's preAction hook: no action has started, nothing was written. */
class HandOff extends Error {}

/**
 * The actions the front runs itself: those that need neither the API client nor any heavy
 * library. The front handles help and usage errors too (commander, before any action).
 */
function runsInFront(cmd: Command): boolean {
  if (cmd.parent?.parent) return false;
  if (cmd.name() === 'completion') return true;
  return cmd.name() === 'version' && cmd.opts<{ client?: boolean }>().client === true;
}

/**
 * Runs bronzectl with `argv` (without the program name); resolves to the exit code. With
 * `front`, resolves to HAND_OFF instead when the command is one the front leaves to the full
 * CLI (see runsInFront), before its action starts and with nothing written: the full CLI then
 * runs the same argv from the start.
 */
export async function runProgram(argv: string[], io: Partial<IO> = {}, opts: { front?: boolean } = {}): Promise<number | typeof HAND_OFF> {
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
  program = buildProgram(ctx, argv);
  if (opts.front) {
    program.hook('preAction', (_root, action) => {
      if (!runsInFront(action)) throw new HandOff();
    });
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof HandOff) return HAND_OFF;
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
