import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../lib/log.ts';
import { newCA } from '../pki/ca.ts';
import { issueServerCert } from '../pki/certs.ts';
import { ApidCertificateSource, pairMatches } from './certs.ts';

let tmp: string | undefined;
let source: ApidCertificateSource | undefined;
afterEach(() => {
  source?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

async function pair(cn: string) {
  const ca = await newCA({ commonName: 'test ca', validityDays: 1 });
  const server = await issueServerCert(ca, { commonName: cn, ipAddresses: ['127.0.0.1'], ttlMs: 3600_000 });
  return { ca, server };
}

describe('apid certificate source', () => {
  it('loads certificates as soon as machined writes them, into a directory that did not exist yet', async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apid-certs-'));
    const dir = path.join(tmp, 'apid');
    source = new ApidCertificateSource(dir, silentLogger, 60_000); // a poll this slow cannot be what finds them
    source.start();
    const { ca, server } = await pair('n1');
    const t0 = Date.now();
    const ready = source.ready();
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'ca.crt'), ca.crt);
    fs.writeFileSync(path.join(dir, 'server.key'), server.key);
    fs.writeFileSync(path.join(dir, 'server.crt'), server.crt);
    const c = await ready;
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(c.serverCert.toString()).toBe(server.crt);
  });

  it('skips a set whose key does not belong to its certificate (a renewal half written)', async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apid-certs-'));
    const a = await pair('a');
    const b = await pair('b');
    expect(pairMatches(Buffer.from(a.server.crt), Buffer.from(a.server.key))).toBe(true);
    expect(pairMatches(Buffer.from(a.server.crt), Buffer.from(b.server.key))).toBe(false);
    expect(pairMatches(Buffer.from('junk'), Buffer.from(a.server.key))).toBe(false);
    fs.writeFileSync(path.join(tmp, 'ca.crt'), a.ca.crt);
    fs.writeFileSync(path.join(tmp, 'server.key'), b.server.key);
    fs.writeFileSync(path.join(tmp, 'server.crt'), a.server.crt);
    source = new ApidCertificateSource(tmp, silentLogger, 60_000);
    source.start();
    expect(source.certs).toBeUndefined();
    fs.writeFileSync(path.join(tmp, 'server.key'), a.server.key);
    await source.ready();
    expect(source.certs!.serverKey.toString()).toBe(a.server.key);
  });

  it('checks a set of files once, however many events its writing makes, and not again while the files stay the same', async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apid-certs-'));
    const { ca, server } = await pair('n1');
    source = new ApidCertificateSource(tmp, silentLogger, 60_000);
    source.start();
    const parse = vi.spyOn(crypto, 'createPrivateKey');
    try {
      // As machined writes them: each file a temporary one renamed into place.
      for (const [f, text] of [['ca.crt', ca.crt], ['server.key', server.key], ['server.crt', server.crt]] as const) {
        fs.writeFileSync(path.join(tmp, `${f}.tmp`), text);
        fs.renameSync(path.join(tmp, `${f}.tmp`), path.join(tmp, f));
      }
      await source.ready();
      // The same contents written again, several times over: no new check.
      for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(tmp, 'server.crt'), server.crt);
      await new Promise((r) => setTimeout(r, 200));
      source.reload();
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });
});
