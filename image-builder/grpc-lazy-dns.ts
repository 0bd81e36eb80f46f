// An esbuild plugin for bundle.ts (its own module, so that a test can load it).
import fs from 'node:fs';
import type * as esbuild from 'esbuild';

/**
 * grpc-js's DNS resolver with `node:dns` loaded when it first resolves a name, not when
 * grpc-js loads. Loading node:dns makes its default resolver, a c-ares channel, at once: 90 ms
 * of machined's start under QEMU/TCG in a 512 MiB VM (apid 33 ms), in every role, for a module
 * the roles that talk over unix sockets alone never use. The resolver only reaches for
 * `dns.promises` inside its methods, so a getter that requires it then is the same module.
 */
export const GRPC_DNS_RESOLVER = /[\\/]@grpc[\\/]grpc-js[\\/]build[\\/]src[\\/]resolver-dns\.js$/;
export const EAGER_DNS = 'const dns_1 = require("dns");';
export const LAZY_DNS = 'let dns_loaded; const dns_1 = { get promises() { return (dns_loaded ??= require("dns")).promises; } };';
export function grpcLazyDns(source: string, file: string): string {
  const at = source.indexOf(EAGER_DNS);
  if (at < 0 || source.indexOf(EAGER_DNS, at + 1) >= 0) throw new Error(`bundle: ${file}: expected one '${EAGER_DNS}' (grpc-js changed: look at it again)`);
  // Every other use must be dns_1.promises, which the getter serves.
  const uses = source.match(/\bdns_1\.\w+/g) ?? [];
  const other = uses.find((u) => u !== 'dns_1.promises');
  if (other) throw new Error(`bundle: ${file}: uses ${other}, which the lazy node:dns does not serve (grpc-js changed: look at it again)`);
  return source.replace(EAGER_DNS, LAZY_DNS);
}
export const grpcLazyDnsPlugin: esbuild.Plugin = {
  name: 'grpc-lazy-dns',
  setup(build) {
    build.onLoad({ filter: GRPC_DNS_RESOLVER }, (args) => ({ contents: grpcLazyDns(fs.readFileSync(args.path, 'utf8'), args.path), loader: 'js' }));
  },
};
