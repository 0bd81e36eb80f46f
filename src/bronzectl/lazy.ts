// The modules bronzectl imports only when a command runs: the API client (grpc-js, the protos),
// the client config and PKI code, YAML, the config patcher and validator (zod), and the
// commands' heavy halves (commands/*-impl.ts).
//
// Commands get them with `await load('name')`, never with a static or dynamic import of their
// own, so that none of them is part of the front (front.ts: what starts first, and handles help,
// usage errors, `version --client` and `completion` without loading any of this). The full CLI
// (cli.ts) supplies the loaders; in the front there are none, and load() throws.
//
// A command's heavy half adds its own entry to LazyModules (a `declare module '../lazy.ts'` block
// in the -impl file, naming what the light half calls), and its loader to cli.ts: this file names
// no command file, so that no command's imports come back to it.
export interface LazyModules {
  client: typeof import('../client/index.ts');
  clientConfig: typeof import('../contract/clientconfig.ts');
  secrets: typeof import('../contract/secrets.ts');
  certs: typeof import('../pki/certs.ts');
  protos: typeof import('../contract/protos.ts');
  configPatch: typeof import('../config/patch.ts');
}

export type Loaders = { readonly [K in keyof LazyModules]: () => Promise<LazyModules[K]> };

let loaders: Loaders | undefined;
let clientModule: LazyModules['client'] | undefined;

/** Called once by the full CLI (cli.ts). */
export function setLoaders(l: Loaders): void {
  loaders = l;
}

/** Imports one of the lazy modules (once; later calls get the same module). */
export async function load<K extends keyof LazyModules>(name: K): Promise<LazyModules[K]> {
  if (!loaders) throw new Error(`bronzectl: ${name} is not available here (the front runs no command that needs it)`);
  const m = await loaders[name]();
  if (name === 'client') clientModule = m as LazyModules['client'];
  return m;
}

/** The API client module if it is loaded already (for checks that must stay synchronous). */
export function loadedClient(): LazyModules['client'] | undefined {
  return clientModule;
}
