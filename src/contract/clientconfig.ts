// The client configuration bronzectl reads: Talos's talosconfig format, renamed for Bronze.
//
//   context: prod
//   contexts:
//     prod:
//       endpoints: [10.5.0.2]
//       nodes: [10.5.0.3]     # optional
//       ca: <base64 PEM>      # the OS CA certificate
//       crt: <base64 PEM>     # client certificate; its Organizations are the roles
//       key: <base64 PEM>     # client key
//
// In memory, ca/crt/key are PEM text ready for node:tls.
import { API_ROLES } from './api-roles.ts';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../lib/atomic.ts';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import type { CertAndKey } from '../pki/ca.ts';
import { issueClientCert } from '../pki/certs.ts';
import { toBase64Pem } from '../pki/pem.ts';
import { FieldError, Fields, join, parseYamlText } from './secrets.ts';

export interface ClientContext {
  endpoints: string[];
  nodes: string[];
  ca: string;
  crt: string;
  key: string;
}

export interface ClientConfig {
  /** The current context's name; empty when there are no contexts. */
  context: string;
  contexts: Record<string, ClientContext>;
}


/**
 * Where the client config lives: the `--bronzeconfig` flag, else `$BRONZECONFIG`, else
 * `$XDG_CONFIG_HOME/bronze/config.yaml`, else `~/.bronze/config`. Empty values count as unset.
 */
export function clientConfigPath(env: Record<string, string | undefined>, flag?: string): string {
  const home = env.HOME || os.homedir();
  const expand = (p: string) => (p === '~' ? home : p.startsWith('~/') ? path.join(home, p.slice(2)) : p);
  if (flag) return expand(flag);
  if (env.BRONZECONFIG) return expand(env.BRONZECONFIG);
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, 'bronze', 'config.yaml');
  return path.join(home, '.bronze', 'config');
}

function validContextName(name: string): boolean {
  return name !== '' && name !== '__proto__' && !/[\s\p{Cc}]/u.test(name);
}

/** Parses and validates client config YAML; errors name the source and the field. */
export function parseClientConfig(text: string, source?: string): ClientConfig {
  const f = new Fields(source);
  const data = parseYamlText(text, source);
  const root = f.object(data ?? {}, '', ['context', 'contexts']);
  const context = f.string(root, 'context', '', { optional: true, allowEmpty: true }) ?? '';
  const raw = root.contexts === undefined || root.contexts === null ? {} : f.object(root.contexts, 'contexts', Object.keys(root.contexts as object));
  const contexts: Record<string, ClientContext> = {};
  for (const [name, v] of Object.entries(raw)) {
    const p = join('contexts', name);
    if (!validContextName(name)) f.fail(p, 'invalid context name');
    const c = f.object(v, p, ['endpoints', 'nodes', 'ca', 'crt', 'key']);
    const crt = f.certificate(c, 'crt', p);
    const key = f.privateKey(c, 'key', p);
    f.keyMatches(crt, key, join(p, 'crt'), join(p, 'key'));
    contexts[name] = {
      endpoints: f.stringList(c, 'endpoints', p, true),
      nodes: f.stringList(c, 'nodes', p, true),
      ca: f.certificate(c, 'ca', p),
      crt,
      key,
    };
  }
  if (context && !Object.hasOwn(contexts, context)) f.fail('context', `${JSON.stringify(context)} is not one of contexts`);
  return { context, contexts };
}

export function serializeClientConfig(cfg: ClientConfig): string {
  const contexts: Record<string, unknown> = {};
  for (const [name, c] of Object.entries(cfg.contexts)) {
    contexts[name] = {
      endpoints: c.endpoints,
      ...(c.nodes.length > 0 ? { nodes: c.nodes } : {}),
      ca: toBase64Pem(c.ca),
      crt: toBase64Pem(c.crt),
      key: toBase64Pem(c.key),
    };
  }
  return YAML.stringify({ context: cfg.context, contexts }, { lineWidth: 0 });
}

/** Reads and validates the client config at `file`. */
export async function load(file: string): Promise<ClientConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new FieldError('', 'no such file (generate one with `bronzectl gen config`)', file);
    throw new FieldError('', `cannot read: ${(e as Error).message}`, file);
  }
  return parseClientConfig(text, file);
}

/**
 * Writes the client config atomically: a temporary file beside the target (mode 0600), fsync,
 * rename over the target, fsync of the directory. The parent directory is created with mode 0700.
 * On failure the temporary file is removed and any previous file is left as it was.
 */
export async function save(file: string, cfg: ClientConfig): Promise<void> {
  await writeFileAtomic(file, serializeClientConfig(cfg), { mode: 0o600, dirMode: 0o700 });
}

export interface MergeResult {
  config: ClientConfig;
  /** Contexts of `from` stored under another name because the name was taken. */
  renames: { from: string; to: string }[];
}

/**
 * Merges `from` into `into` (neither is modified). A context whose name is taken is stored as
 * `<name>-1`, `<name>-2`, … (the first free), unless `force` overwrites it. The result's current
 * context is the incoming one (under its new name), or `into`'s when `from` has none.
 */
export function merge(into: ClientConfig, from: ClientConfig, opts: { force?: boolean } = {}): MergeResult {
  const contexts: Record<string, ClientContext> = { ...into.contexts };
  const renames: { from: string; to: string }[] = [];
  const mapped = new Map<string, string>();
  for (const [name, ctx] of Object.entries(from.contexts)) {
    let target = name;
    if (!opts.force && Object.hasOwn(contexts, name)) {
      for (let i = 1; ; i++) {
        target = `${name}-${i}`;
        if (!Object.hasOwn(contexts, target)) break;
      }
      renames.push({ from: name, to: target });
    }
    mapped.set(name, target);
    contexts[target] = { ...ctx, endpoints: [...ctx.endpoints], nodes: [...ctx.nodes] };
  }
  const context = from.context ? (mapped.get(from.context) ?? into.context) : into.context;
  return { config: { context, contexts }, renames };
}

export interface NewClientConfigOptions {
  contextName: string;
  endpoints: string[];
  nodes?: string[];
  /** The OS CA (certificate and key) that signs the client certificate. */
  ca: CertAndKey;
  roles: string[];
  ttlMs: number;
  /** The certificate's Common Name; default "admin", as Talos's generated config. */
  commonName?: string;
  now?: Date;
}

/** A client config with one context, holding a fresh client certificate for `roles` from the OS CA. */
export async function newClientConfig(opts: NewClientConfigOptions): Promise<ClientConfig> {
  if (!validContextName(opts.contextName)) throw new Error(`invalid context name ${JSON.stringify(opts.contextName)}`);
  if (opts.roles.length === 0) throw new Error('roles: at least one role is required');
  for (const r of opts.roles) {
    if (!(API_ROLES as readonly string[]).includes(r)) throw new Error(`roles: unknown role ${JSON.stringify(r)} (known: ${API_ROLES.join(', ')})`);
  }
  const client = await issueClientCert(opts.ca, {
    commonName: opts.commonName ?? 'admin',
    roles: [...new Set(opts.roles)],
    ttlMs: opts.ttlMs,
    ...(opts.now ? { now: opts.now } : {}),
  });
  return {
    context: opts.contextName,
    contexts: {
      [opts.contextName]: {
        endpoints: [...opts.endpoints],
        nodes: [...(opts.nodes ?? [])],
        ca: opts.ca.crt,
        crt: client.crt,
        key: client.key,
      },
    },
  };
}
