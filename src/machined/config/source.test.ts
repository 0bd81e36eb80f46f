// Where a configuration comes from at boot: bronze.config=<url> is fetched with the machine's
// SMBIOS UUID in place of ${uuid}, from a real HTTP server here, and neither the log, the
// errors nor the source it reports give that UUID away (it is what nodeID disk keys are made of).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ListLogger } from '../../lib/log.ts';
import { parseCmdline } from '../cmdline.ts';
import { acquireConfig, substitute } from './source.ts';

const UUID = '6b0e3f5c-1d2a-5e4f-8a7b-9c0d1e2f3a4b';
let dir: string;
let sys: string;
let server: http.Server;
let port: number;
const requests: string[] = [];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-config-source-'));
  sys = path.join(dir, 'sys');
  fs.mkdirSync(path.join(sys, 'class/dmi/id'), { recursive: true });
  fs.writeFileSync(path.join(sys, 'class/dmi/id/product_uuid'), `${UUID.toUpperCase()}\n`);
  requests.length = 0;
  // The first request for each path fails (503), the next ones answer: one retry is logged.
  const seen = new Set<string>();
  server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (!seen.has(req.url ?? '')) {
      seen.add(req.url ?? '');
      res.writeHead(503).end();
    } else if (req.url === `/machines/${UUID}.yaml`) res.writeHead(200).end('version: v1alpha1\n');
    else res.writeHead(403).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterEach(async () => {
  await new Promise((r) => server.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('bronze.config=<url> with ${uuid}', () => {
  it('fetches the URL with the SMBIOS UUID, and logs and reports it as written', async () => {
    const log = new ListLogger();
    const url = `http://127.0.0.1:${port}/machines/\${uuid}.yaml`;
    const got = await acquireConfig(parseCmdline(`bronze.config=${url}`), log, { sysRoot: sys, firstDelayMs: 10 });
    expect(got?.text).toBe('version: v1alpha1\n');
    expect(requests).toEqual([`/machines/${UUID}.yaml`, `/machines/${UUID}.yaml`]);
    expect(got?.source).toBe(url);
    expect(log.lines).toEqual([expect.stringMatching(/^warn: config http:\/\/127\.0\.0\.1:\d+\/machines\/\$\{uuid\}\.yaml: attempt 1\/20 failed \(HTTP 503/)]);
    expect(JSON.stringify(log.lines).toLowerCase()).not.toContain(UUID);
  });

  it('names the URL as written in the error when the server refuses it', async () => {
    const log = new ListLogger();
    const url = `http://127.0.0.1:${port}/other/\${uuid}`;
    const err = await acquireConfig(parseCmdline(`bronze.config=${url}`), log, { sysRoot: sys, firstDelayMs: 10 }).catch((e: Error) => e);
    expect((err as Error).message).toBe(`config ${url}: HTTP 403 Forbidden`);
    expect(requests).toEqual([`/other/${UUID}`, `/other/${UUID}`]);
    expect(`${(err as Error).message}${log.lines.join('\n')}`.toLowerCase()).not.toContain(UUID);
  });

  it('substitutes ${uuid} and ${mac}, URL-encoded', () => {
    expect(substitute('http://h/${uuid}?m=${mac}', { uuid: UUID, mac: '52:54:00:12:34:56' })).toBe(`http://h/${UUID}?m=52%3A54%3A00%3A12%3A34%3A56`);
  });
});
