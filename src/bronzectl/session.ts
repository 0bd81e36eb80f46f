// What every API command shares: the global flags resolved against the client config (context,
// endpoints, nodes), one client per run, and talosctl's rules for naming nodes and reporting their
// errors. A failure on any node is printed as `<node>: <error>` and makes the run exit non-zero,
// while the other nodes' results are still shown.
//
// The client config code (YAML, the PKI) and the API client (grpc-js, the protos) are loaded
// when a command first needs them (lazy.ts), not when bronzectl starts.
import type { ClientConfig, ClientContext } from '../contract/clientconfig.ts';
import type { CallOptions, Client } from '../client/client.ts';
import type { RpcError } from '../client/errors.ts';
import type { Envelope, Item } from '../client/types.ts';
import { load, loadedClient, type LazyModules } from './lazy.ts';

/** The API client library (grpc-js, the protos, the routing metadata). */
export type ClientLib = LazyModules['client'];
/** The client config library (YAML, the PKI), with the FieldError its parser throws. */
export type ConfigLib = LazyModules['clientConfig'] & Pick<LazyModules['secrets'], 'FieldError'>;

/** Loads the API client library. */
export function clientLib(): Promise<ClientLib> {
  return load('client');
}

/** Loads the client config library. */
export async function configLib(): Promise<ConfigLib> {
  const [config, { FieldError }] = await Promise.all([load('clientConfig'), load('secrets')]);
  return { ...config, FieldError };
}

/** Whether `e` is the client's RpcError (none can exist before the client library is loaded). */
export function isRpcError(e: unknown): e is RpcError {
  const lib = loadedClient();
  return lib !== undefined && e instanceof lib.RpcError;
}

export interface Writer {
  write(chunk: string | Uint8Array): unknown;
}

export interface IO {
  stdout: Writer;
  stderr: Writer;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborted on SIGINT: streams end cleanly, calls are cancelled. */
  signal?: AbortSignal;
  /** Endpoint choice for the client (tests fix it); default random. */
  random?: () => number;
}

/** What a command's registration gets: the IO, and the per-run session built from the global flags. */
export interface Ctx {
  io: IO;
  session(): Session;
}

export interface GlobalOptions {
  bronzeconfig?: string;
  context?: string;
  endpoints: string[];
  nodes: string[];
}

/** An error the user can act on: printed as is, exit code 1. */
export class UserError extends Error {
  override name = 'UserError';
}

export class Session {
  failed = false;
  /** Maintenance mode: TLS without certificates, straight to each node (set by --insecure). */
  insecure = false;
  #config: Promise<ClientConfig> | undefined;
  #client: Client | undefined;
  readonly #insecureClients = new Map<string, Client>();

  constructor(
    readonly io: IO,
    readonly globals: GlobalOptions,
  ) {}

  get signal(): AbortSignal | undefined {
    return this.io.signal;
  }

  out(s: string | Uint8Array): void {
    this.io.stdout.write(s);
  }

  /** Prints `<node>: <message>` on stderr and marks the run failed. */
  fail(node: string, message: string): void {
    this.failed = true;
    this.io.stderr.write(`${node ? `${node}: ` : ''}${message}\n`);
  }

  warn(message: string): void {
    this.io.stderr.write(`${message}\n`);
  }

  /** The client config file: --bronzeconfig, else $BRONZECONFIG, ... (see clientConfigPath). */
  async configPath(): Promise<string> {
    return (await configLib()).clientConfigPath(this.io.env, this.globals.bronzeconfig);
  }

  /** The client config, read once per run. */
  config(): Promise<ClientConfig> {
    this.#config ??= (async () => {
      const { load, FieldError } = await configLib();
      try {
        return await load(await this.configPath());
      } catch (e) {
        throw e instanceof FieldError ? new UserError(e.message) : e;
      }
    })();
    return this.#config;
  }

  /** The context in use: --context, else the config's current one. */
  async context(): Promise<{ name: string; context: ClientContext }> {
    const cfg = await this.config();
    const name = this.globals.context || cfg.context;
    if (!name) throw new UserError(`${await this.configPath()}: no current context (set one with \`bronzectl config context <name>\`)`);
    const context = Object.hasOwn(cfg.contexts, name) ? cfg.contexts[name] : undefined;
    if (!context) throw new UserError(`context ${JSON.stringify(name)} is not defined in ${await this.configPath()}`);
    return { name, context };
  }

  /**
   * -n/--nodes, else the context's nodes (none: the endpoint answers for itself). They go into
   * the routing metadata, so each must name a node, without a port (apid always dials the API
   * port); with --insecure, -n names the endpoint itself and may carry one.
   */
  async nodes(): Promise<string[]> {
    if (this.insecure) return this.globals.nodes;
    const given = this.globals.nodes.length > 0;
    const names = given ? this.globals.nodes : (await this.context()).context.nodes;
    if (names.length === 0) return names;
    const { NodeNameError, nodeHost } = await clientLib();
    for (const n of names) {
      try {
        nodeHost(n);
      } catch (e) {
        if (!(e instanceof NodeNameError)) throw e;
        const where = given ? '-n/--nodes' : `the context's nodes (${await this.configPath()})`;
        throw new UserError(`${e.message} (${where} name nodes, which are always reached on their API port; an address with a port is an endpoint: -e/--endpoints)`);
      }
    }
    return names;
  }

  async client(): Promise<Client> {
    if (this.#client) return this.#client;
    const { context } = await this.context();
    const endpoints = this.globals.endpoints.length > 0 ? this.globals.endpoints : context.endpoints;
    if (endpoints.length === 0) throw new UserError('no endpoints: pass -e/--endpoints or set them with `bronzectl config endpoint`');
    const { connect } = await clientLib();
    try {
      this.#client = connect({ endpoints, ca: context.ca, crt: context.crt, key: context.key, ...(this.io.random ? { random: this.io.random } : {}) });
    } catch (e) {
      throw new UserError((e as Error).message);
    }
    return this.#client;
  }

  /** Maintenance-mode targets: the nodes, else the endpoints, each dialled directly. */
  insecureTargets(): string[] {
    const t = this.globals.nodes.length > 0 ? this.globals.nodes : this.globals.endpoints;
    if (t.length === 0) throw new UserError('--insecure needs the node to talk to: pass -n/--nodes (or -e/--endpoints)');
    return t;
  }

  async insecureClient(target: string): Promise<Client> {
    let c = this.#insecureClients.get(target);
    if (!c) {
      const { connect } = await clientLib();
      try {
        c = connect({ endpoints: [target], insecure: true });
      } catch (e) {
        throw new UserError((e as Error).message);
      }
      this.#insecureClients.set(target, c);
    }
    return c;
  }

  callOptions(extra: Partial<CallOptions> = {}): CallOptions {
    return { ...(this.io.signal ? { signal: this.io.signal } : {}), ...extra };
  }

  /**
   * A unary machine/time call for every target node at once (`nodes` metadata), or for the
   * endpoint itself when no node is given. Returns each node's item; prints each node's error.
   */
  async fanOut<M extends Item>(call: (c: Client, o: CallOptions) => Promise<Envelope<M>>): Promise<Array<{ node: string; msg: M }>> {
    if (this.insecure) {
      const out: Array<{ node: string; msg: M }> = [];
      for (const target of this.insecureTargets()) {
        out.push(...(await this.#collect(await this.insecureClient(target), [target], call, this.callOptions())));
      }
      return out;
    }
    const targets = await this.nodes();
    const client = await this.client();
    const { nodes: nodesMetadata } = await clientLib();
    return this.#collect(client, targets, call, this.callOptions(targets.length > 0 ? { metadata: nodesMetadata(targets) } : {}));
  }

  async #collect<M extends Item>(
    client: Client,
    targets: string[],
    call: (c: Client, o: CallOptions) => Promise<Envelope<M>>,
    opts: CallOptions,
  ): Promise<Array<{ node: string; msg: M }>> {
    let reply: Envelope<M>;
    try {
      reply = await call(client, opts);
    } catch (e) {
      this.fail(targets.length === 1 ? targets[0]! : isRpcError(e) ? e.endpoint : client.currentEndpoint, errorText(e));
      return [];
    }
    const msgs = reply.messages ?? [];
    const out: Array<{ node: string; msg: M }> = [];
    msgs.forEach((msg, i) => {
      const node = this.label(client, targets, msg, i, msgs.length);
      if (msg.metadata?.error) this.fail(node, msg.metadata.error);
      else out.push({ node, msg });
    });
    return out;
  }

  /** The NODE of a reply item: its metadata hostname, else the node targeted, else the endpoint. */
  label(client: Client, targets: readonly string[], msg: Item | undefined, index = 0, count = 1): string {
    if (msg?.metadata?.hostname) return msg.metadata.hostname;
    if (targets.length === 1) return targets[0]!;
    if (targets.length > 1 && targets.length === count) return targets[index]!;
    return client.currentEndpoint;
  }

  /**
   * A server stream from every target node at once (`nodes` metadata). Items with an error are
   * reported; the others go to onItem with their node's name. Ends cleanly on SIGINT.
   */
  async streamFanOut<M extends Item>(open: (c: Client, o: CallOptions) => AsyncIterable<M>, onItem: (node: string, msg: M) => void): Promise<void> {
    if (this.insecure) {
      // Maintenance mode: each target dialled directly, all at once (a node answers only for itself).
      await Promise.all(this.insecureTargets().map(async (t) => this.#stream(await this.insecureClient(t), [t], this.callOptions(), open, onItem)));
      return;
    }
    const targets = await this.nodes();
    const client = await this.client();
    const { nodes: nodesMetadata } = await clientLib();
    await this.#stream(client, targets, this.callOptions(targets.length > 0 ? { metadata: nodesMetadata(targets) } : {}), open, onItem);
  }

  async #stream<M extends Item>(client: Client, targets: string[], opts: CallOptions, open: (c: Client, o: CallOptions) => AsyncIterable<M>, onItem: (node: string, msg: M) => void): Promise<void> {
    try {
      for await (const msg of open(client, opts)) {
        const node = this.label(client, targets, msg);
        if (msg.metadata?.error) this.fail(node, msg.metadata.error);
        else onItem(node, msg);
      }
    } catch (e) {
      this.fail(targets.length === 1 ? targets[0]! : isRpcError(e) ? e.endpoint : client.currentEndpoint, errorText(e));
    }
  }

  /**
   * Runs `fn` once per target node with `node` metadata (for APIs whose replies carry no node
   * metadata, such as COSI), all nodes concurrently; `target` is undefined when no node is given
   * (the endpoint answers: name it with `client.currentEndpoint` once the call is done). Errors
   * are reported per node.
   */
  async perNode(fn: (c: Client, o: CallOptions, target: string | undefined) => Promise<void>): Promise<void> {
    if (this.insecure) {
      await Promise.all(this.insecureTargets().map((t) => this.#guard(t, async () => fn(await this.insecureClient(t), this.callOptions(), t))));
      return;
    }
    const targets = await this.nodes();
    const client = await this.client();
    const { node: nodeMetadata } = await clientLib();
    if (targets.length === 0) {
      await this.#guard(undefined, () => fn(client, this.callOptions(), undefined), client);
      return;
    }
    await Promise.all(targets.map((t) => this.#guard(t, () => fn(client, this.callOptions({ metadata: nodeMetadata(t) }), t))));
  }

  async #guard(node: string | undefined, fn: () => Promise<void>, client?: Client): Promise<void> {
    try {
      await fn();
    } catch (e) {
      if (this.signal?.aborted && isRpcError(e) && e.code === 1) return;
      if (e instanceof UserError) throw e;
      this.fail(node ?? (isRpcError(e) ? e.endpoint : (client?.currentEndpoint ?? '')), errorText(e));
    }
  }

  close(): void {
    this.#client?.close();
    for (const c of this.#insecureClients.values()) c.close();
  }
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
