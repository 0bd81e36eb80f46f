// grpc-js's DNS resolver as bundle.ts bundles it: node:dns is not loaded with it, and the
// resolver still resolves a name once it is asked to.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { EAGER_DNS, grpcLazyDns } from './grpc-lazy-dns.ts';

const require = createRequire(import.meta.url);
const file = require.resolve('@grpc/grpc-js/build/src/resolver-dns.js');

/** The module from `source`, its requires recorded: grpc-js's own modules are the real ones. */
function load(source: string): { exports: { setup(): void }; required: string[] } {
  const real = createRequire(file);
  const required: string[] = [];
  const recording = (id: string) => (required.push(id), real(id) as unknown);
  const mod = { exports: {} as { setup(): void } };
  vm.runInThisContext(`(function (exports, require, module) {${source}\n})`)(mod.exports, recording, mod);
  return { exports: mod.exports, required };
}

describe('grpcLazyDns', () => {
  it('loads node:dns when the resolver first needs it, not with the module', async () => {
    const source = fs.readFileSync(file, 'utf8');
    expect(load(source).required).toContain('dns');
    const lazy = load(grpcLazyDns(source, file));
    expect(lazy.required).not.toContain('dns');
    // Registered as grpc-js's dns resolver, it is made (which needs dns.promises) and answers
    // for an address (an IP target is never looked up: no DNS traffic).
    lazy.exports.setup();
    const real = createRequire(file);
    // grpc-js's internal modules (no type declarations are published for them).
    const resolver = real('./resolver') as { createResolver(uri: unknown, listener: unknown, options: object): { updateResolution(): void } };
    const uri = (real('./uri-parser') as { parseUri(s: string): unknown }).parseUri('dns:127.0.0.1:50000');
    const endpoints = await new Promise<unknown>((resolve) => {
      const r = resolver.createResolver(uri, ((result: unknown) => (resolve(result), true)) as never, { 'grpc.service_config_disable_resolution': 1 });
      expect(lazy.required).toContain('dns');
      r.updateResolution();
    });
    expect(JSON.stringify(endpoints)).toMatch(/127\.0\.0\.1.*50000/);
  });

  it('refuses a resolver that does not load node:dns as expected', () => {
    expect(() => grpcLazyDns('const dns = require("node:dns");', 'x.js')).toThrow(new RegExp(`x\\.js: expected one '${EAGER_DNS.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`));
    expect(() => grpcLazyDns(`${EAGER_DNS}\ndns_1.lookup("a");`, 'y.js')).toThrow(/y\.js: uses dns_1\.lookup/);
  });
});
