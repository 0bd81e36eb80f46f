// `bronzectl config ...`: the client config file, as talosctl's `config` commands.
//   new [path] [--roles r,...] [--crt-ttl 87600h]   a new client config from the node's CA (GenerateClientConfiguration)
//   merge <file> [--force]                          merge contexts in; a clashing name gets an index appended
//   contexts | context <name> | endpoint <e...> | node [n...] | info
//
// The client config code (YAML, the PKI) is imported when a subcommand runs (configLib).
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ClientConfig, ClientContext } from '../../contract/clientconfig.ts';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';
import { listArg } from '../args.ts';
import { humanizeTime, parseGoDuration, table } from '../output.ts';
import { UserError, configLib, type Session } from '../session.ts';

async function loadOrThrow(file: string): Promise<ClientConfig> {
  const lib = await configLib();
  try {
    return await lib.load(file);
  } catch (e) {
    throw e instanceof lib.FieldError ? new UserError(e.message) : e;
  }
}

/** The context a `config` subcommand edits (in `file`): --context, else the current one. */
function selected(s: Session, file: string, cfg: ClientConfig): { name: string; context: ClientContext } {
  const name = s.globals.context || cfg.context;
  if (!name) throw new UserError(`${file}: no context is set (use \`bronzectl config context <name>\`)`);
  const context = Object.hasOwn(cfg.contexts, name) ? cfg.contexts[name] : undefined;
  if (!context) throw new UserError(`context ${JSON.stringify(name)} is not defined in ${file}`);
  return { name, context };
}

function newConfigCommand(config: Command, ctx: Ctx): void {
  config
    .command('new')
    .description('Generate a new client configuration file (a new client certificate from the node)')
    .argument('[path]', 'where to write it', 'bronzeconfig')
    .option('--roles <roles>', 'roles of the client certificate (repeatable, comma-separated)', listArg)
    .option('--crt-ttl <duration>', 'certificate TTL', '87600h')
    .action(async (file: string, opts: { roles?: string[]; crtTtl: string }) => {
      const s = ctx.session();
      if ((await s.nodes()).length > 1) throw new UserError('"config new" command is not supported with multiple nodes');
      let ttlMs: number;
      try {
        ttlMs = parseGoDuration(opts.crtTtl);
      } catch (e) {
        throw new UserError(`--crt-ttl: ${(e as Error).message}`);
      }
      if (!(ttlMs > 0)) throw new UserError('--crt-ttl: must be positive');
      const roles = opts.roles && opts.roles.length > 0 ? opts.roles : ['os:admin'];
      const replies = await s.fanOut((c, o) =>
        c.machine.GenerateClientConfiguration({ roles, crt_ttl: { seconds: Math.floor(ttlMs / 1000), nanos: (ttlMs % 1000) * 1e6 } }, o),
      );
      if (replies.length === 0) return; // the error is printed
      if (replies.length !== 1) throw new UserError(`expected one reply, got ${replies.length}`);
      const { msg } = replies[0]!;
      const { name: current, context: cur } = await s.context();
      const { parseClientConfig, save, serializeClientConfig } = await configLib();
      let generated: ClientConfig;
      try {
        if (msg.talosconfig?.length) {
          generated = parseClientConfig(msg.talosconfig.toString('utf8'), 'the generated client configuration');
        } else {
          generated = {
            context: current,
            contexts: { [current]: { endpoints: [], nodes: [], ca: msg.ca.toString('utf8'), crt: msg.crt.toString('utf8'), key: msg.key.toString('utf8') } },
          };
          // Same checks as a file: PEM certificates, the key matching the certificate.
          generated = parseClientConfig(serializeClientConfig(generated), 'the generated client configuration');
        }
      } catch (e) {
        throw new UserError(e instanceof Error ? e.message : String(e));
      }
      const endpoints = s.globals.endpoints.length > 0 ? s.globals.endpoints : cur.endpoints;
      for (const c of Object.values(generated.contexts)) {
        if (c.endpoints.length === 0) c.endpoints = [...endpoints];
      }
      await save(path.resolve(ctx.io.cwd, file), generated);
    });
}

export function register(program: Command, ctx: Ctx): void {
  const config = program.command('config').description('Manage the client configuration file (bronzeconfig)');

  newConfigCommand(config, ctx);

  config
    .command('merge')
    .description('Merge additional contexts from another client config into the default config; contexts with the same name are renamed by appending an index')
    .argument('<file>', 'client config to merge in')
    .option('--force', 'overwrite contexts with the same name instead of renaming')
    .action(async (file: string, opts: { force?: boolean }) => {
      const s = ctx.session();
      const { merge, save } = await configLib();
      const target = await s.configPath();
      const into: ClientConfig = existsSync(target) ? await loadOrThrow(target) : { context: '', contexts: {} };
      const from = await loadOrThrow(path.resolve(ctx.io.cwd, file));
      const { config: merged, renames } = merge(into, from, { force: !!opts.force });
      for (const r of renames) s.out(`renamed bronzeconfig context ${JSON.stringify(r.from)} -> ${JSON.stringify(r.to)}\n`);
      await save(target, merged);
    });

  config
    .command('contexts')
    .description('List defined contexts')
    .action(async () => {
      const s = ctx.session();
      const cfg = await loadOrThrow(await s.configPath());
      const rows = [['CURRENT', 'NAME', 'ENDPOINTS', 'NODES']];
      for (const name of Object.keys(cfg.contexts).sort()) {
        const c = cfg.contexts[name]!;
        rows.push([name === cfg.context ? '*' : '', name, c.endpoints.join(','), c.nodes.join(',')]);
      }
      s.out(table(rows));
    });

  config
    .command('context')
    .alias('use-context')
    .description('Set the current context')
    .argument('<name>', 'context name')
    .action(async (name: string) => {
      const s = ctx.session();
      const file = await s.configPath();
      const cfg = await loadOrThrow(file);
      if (!Object.hasOwn(cfg.contexts, name)) throw new UserError(`context ${JSON.stringify(name)} is not defined`);
      cfg.context = name;
      await (await configLib()).save(file, cfg);
    });

  config
    .command('endpoint')
    .alias('endpoints')
    .description('Set the endpoint(s) for the current context')
    .argument('<endpoints...>', 'endpoints (space- or comma-separated)')
    .action(async (endpoints: string[]) => {
      const s = ctx.session();
      const file = await s.configPath();
      const cfg = await loadOrThrow(file);
      const { context } = selected(s, file, cfg);
      context.endpoints = endpoints.flatMap((e) => listArg(e));
      await (await configLib()).save(file, cfg);
    });

  config
    .command('node')
    .alias('nodes')
    .description('Set the node(s) for the current context (none: clear them)')
    .argument('[nodes...]', 'nodes (space- or comma-separated)')
    .action(async (nodes: string[]) => {
      const s = ctx.session();
      const file = await s.configPath();
      const cfg = await loadOrThrow(file);
      const { context } = selected(s, file, cfg);
      context.nodes = nodes.flatMap((n) => listArg(n));
      await (await configLib()).save(file, cfg);
    });

  config
    .command('info')
    .description('Show information about the current context')
    .action(async () => {
      const s = ctx.session();
      const file = await s.configPath();
      const cfg = await loadOrThrow(file);
      const { name, context } = selected(s, file, cfg);
      const { certificateInfo } = await load('certs');
      const info = certificateInfo(context.crt);
      const orNot = (xs: string[], sep: string) => (xs.length > 0 ? xs.join(sep) : 'not defined');
      s.out(
        `Current context:     ${name}\n` +
          `Nodes:               ${orNot(context.nodes, ', ')}\n` +
          `Endpoints:           ${orNot(context.endpoints, ', ')}\n` +
          `Roles:               ${orNot(info.organizations, ', ')}\n` +
          `Certificate expires: ${humanizeTime(info.notAfter)} (${info.notAfter.toISOString().slice(0, 10)})\n`,
      );
    });
}
