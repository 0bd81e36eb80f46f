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
/**
 * Each resolver also made its own c-ares channel (`new dns.promises.Resolver()`) when it was
 * constructed, which loaded node:dns anyway, for every target: apid's listening address, each
 * client's endpoint. It is made when the resolver first looks a name up (a custom DNS server in
 * the target's authority still makes it at once, as before). And an IP literal target is told
 * from a name without net.isIPv6, whose first call compiles a large regular expression (88 ms
 * of apid's start under QEMU/TCG, binding [::]:50000): the same strings, as the URL parser
 * reads an IPv6 host (`IPV6_LITERAL`; one with a zone index still goes to net.isIPv6).
 */
export const EAGER_RESOLVER = 'this.alternativeResolver = new dns_1.promises.Resolver();';
export const LAZY_RESOLVER = 'this.alternativeResolver = target.authority ? new dns_1.promises.Resolver() : null;';
const RESOLVER_USE = 'this.alternativeResolver.resolve';
const LAZY_RESOLVER_USE = '(this.alternativeResolver ??= new dns_1.promises.Resolver()).resolve';
const IS_IPV6 = '(0, net_1.isIPv6)(hostPort.host)';
export const IPV6_LITERAL = `
function bronzeIsIPv6(s) {
  if (/^[0-9A-Fa-f:.]+$/.test(s)) return s.includes(':') && URL.canParse('http://[' + s + ']/');
  return s.includes('%') && (0, net_1.isIPv6)(s);
}`;

function replaceCounted(source: string, file: string, from: string, to: string, count: number): string {
  const n = source.split(from).length - 1;
  if (n !== count) throw new Error(`bundle: ${file}: expected '${from}' ${count} time(s), found ${n} (grpc-js changed: look at it again)`);
  return source.split(from).join(to);
}

export function grpcLazyDns(source: string, file: string): string {
  const at = source.indexOf(EAGER_DNS);
  if (at < 0 || source.indexOf(EAGER_DNS, at + 1) >= 0) throw new Error(`bundle: ${file}: expected one '${EAGER_DNS}' (grpc-js changed: look at it again)`);
  // Every other use must be dns_1.promises, which the getter serves.
  const uses = source.match(/\bdns_1\.\w+/g) ?? [];
  const other = uses.find((u) => u !== 'dns_1.promises');
  if (other) throw new Error(`bundle: ${file}: uses ${other}, which the lazy node:dns does not serve (grpc-js changed: look at it again)`);
  let out = source.replace(EAGER_DNS, LAZY_DNS);
  out = replaceCounted(out, file, EAGER_RESOLVER, LAZY_RESOLVER, 1);
  // The only other uses: setServers under `if (target.authority)`, and the lookups.
  const others = (out.match(/this\.alternativeResolver\.\w+/g) ?? []).filter((u) => u !== 'this.alternativeResolver.setServers' && !u.startsWith(RESOLVER_USE));
  if (others.length > 0) throw new Error(`bundle: ${file}: uses ${others[0]}, which the lazy resolver does not serve (grpc-js changed: look at it again)`);
  out = replaceCounted(out, file, RESOLVER_USE, LAZY_RESOLVER_USE, 3);
  out = replaceCounted(out, file, IS_IPV6, 'bronzeIsIPv6(hostPort.host)', 1);
  return out + IPV6_LITERAL + '\n';
}

/**
 * The other grpc-js modules that ask net.isIPv6 on Bronze's paths, and how often: binding a
 * server names its address (subchannel-address.js's subchannelAddressToString, 106 ms of apid's
 * boot profile under QEMU/TCG, compiling net.isIPv6's expression), a client to a TCP address
 * sorts the addresses it resolved (pick-first), and `ipv6:` targets are checked (resolver-ip).
 * They ask bronzeIsIPv6 instead, as the DNS resolver does.
 */
export const GRPC_IS_IPV6_USES: Readonly<Record<string, number>> = { 'subchannel-address.js': 1, 'load-balancer-pick-first.js': 2, 'resolver-ip.js': 1 };
export const GRPC_IS_IPV6_FILES = new RegExp(`[\\\\/]@grpc[\\\\/]grpc-js[\\\\/]build[\\\\/]src[\\\\/](${Object.keys(GRPC_IS_IPV6_USES).map((f) => f.replace(/\./g, '\\.')).join('|')})$`);
const IS_IPV6_CALL = '(0, net_1.isIPv6)(';

export function grpcFastIsIPv6(source: string, file: string): string {
  const base = file.split(/[\\/]/).pop()!;
  const count = GRPC_IS_IPV6_USES[base];
  if (count === undefined) throw new Error(`bundle: ${file}: not a module whose net.isIPv6 is replaced`);
  return replaceCounted(source, file, IS_IPV6_CALL, 'bronzeIsIPv6(', count) + IPV6_LITERAL + '\n';
}

/**
 * grpc-js's server hands Node's `listen` the address it resolved, `{ host: '::', port }` for
 * apid's `[::]:50000`. With a host, Node looks it up first (`lookupAndListen`: it loads node:dns,
 * which makes a c-ares channel, and `dns.lookup` asks `net.isIP`, whose IPv6 expression compiles
 * at its first call: 159 ms of self time in apid's boot profile under QEMU/TCG, 42 ms more
 * loading node:dns), though an IP literal needs no lookup. Node's listen without a host binds
 * the same unspecified address, `::` (dual stack; IPv4's `0.0.0.0` only where the kernel has no
 * IPv6, which `::` given as a host would refuse), so grpc-js's server leaves the host out for
 * `::` alone. Any other address is listened on as before.
 */
export const GRPC_SERVER = /[\\/]@grpc[\\/]grpc-js[\\/]build[\\/]src[\\/]server\.js$/;
const SERVER_LISTEN = 'http2Server.listen(address, () => {';
export const UNSPECIFIED_LISTEN = `
function bronzeListenAddress(address) {
  return 'host' in address && address.host === '::' ? { port: address.port } : address;
}`;

export function grpcServerListen(source: string, file: string): string {
  return replaceCounted(source, file, SERVER_LISTEN, 'http2Server.listen(bronzeListenAddress(address), () => {', 1) + UNSPECIFIED_LISTEN + '\n';
}

export const grpcLazyDnsPlugin: esbuild.Plugin = {
  name: 'grpc-lazy-dns',
  setup(build) {
    build.onLoad({ filter: GRPC_DNS_RESOLVER }, (args) => ({ contents: grpcLazyDns(fs.readFileSync(args.path, 'utf8'), args.path), loader: 'js' }));
    build.onLoad({ filter: GRPC_IS_IPV6_FILES }, (args) => ({ contents: grpcFastIsIPv6(fs.readFileSync(args.path, 'utf8'), args.path), loader: 'js' }));
    build.onLoad({ filter: GRPC_SERVER }, (args) => ({ contents: grpcServerListen(fs.readFileSync(args.path, 'utf8'), args.path), loader: 'js' }));
  },
};
