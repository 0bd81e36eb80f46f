// apid's certificates, written by machined into <secrets>/apid/ (ca.crt: the OS CA;
// server.crt/key: what apid serves on :50000; client.crt/key, on control-plane nodes only:
// apid's own identity towards other nodes' apid, role os:impersonator). apid watches the directory and swaps them in
// while serving, so a renewed certificate takes effect without a restart.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../lib/log.ts';
import { MAINTENANCE_MARKER } from '../contract/maintenance.ts';

type CaListener = (u: grpc.experimental.CaCertificateUpdate | null) => void;
type IdListener = (u: grpc.experimental.IdentityCertificateUpdate | null) => void;

export const APID_FILES = ['ca.crt', 'server.crt', 'server.key', 'client.crt', 'client.key'] as const;

export interface ApidCerts {
  ca: Buffer;
  serverCert: Buffer;
  serverKey: Buffer;
  /** Absent on workers: trustd never issues a certificate with a role. */
  clientCert?: Buffer;
  clientKey?: Buffer;
}

export function readApidCerts(dir: string): ApidCerts | undefined {
  try {
    const r = (f: string) => fs.readFileSync(path.join(dir, f));
    const opt = (f: string) => (fs.existsSync(path.join(dir, f)) ? r(f) : undefined);
    return { ca: r('ca.crt'), serverCert: r('server.crt'), serverKey: r('server.key'), clientCert: opt('client.crt'), clientKey: opt('client.key') };
  } catch {
    return undefined;
  }
}

/** Whether the PEM certificate and key belong together (false for anything unreadable). */
export function pairMatches(cert: Buffer, key: Buffer): boolean {
  try {
    return new crypto.X509Certificate(cert).checkPrivateKey(crypto.createPrivateKey(key));
  } catch {
    return false;
  }
}

/** A grpc-js certificate provider fed from the files, re-read when they change. */
export class ApidCertificateSource implements grpc.experimental.CertificateProvider {
  private current: ApidCerts | undefined;
  private readonly caListeners = new Set<CaListener>();
  private readonly idListeners = new Set<IdListener>();
  private readonly changeListeners = new Set<(c: ApidCerts) => void>();
  private timer: NodeJS.Timeout | undefined;
  private fingerprint = '';
  private readonly marker: string;

  constructor(
    private readonly dir: string,
    private readonly log: Logger,
    private readonly pollMs = 10_000,
  ) {
    this.marker = path.join(dir, MAINTENANCE_MARKER);
  }

  /**
   * Reads the certificates now, and again whenever a file in their directory changes (inotify,
   * through fs.watch; until machined has made the directory, its parent is watched for it), so
   * that apid serves the moment its certificates are there. A slow poll stays as a safety net
   * for a change a watch could miss.
   */
  start(): void {
    this.reload();
    this.watch();
    this.timer = setInterval(() => this.reload(), this.pollMs);
    this.timer.unref();
  }

  private stopped = false;

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  private watchers: fs.FSWatcher[] = [];
  private watchingDir = false;

  private watch(): void {
    const watch = (p: string): boolean => {
      try {
        const w = fs.watch(p, { persistent: false }, () => this.changed());
        w.on('error', () => w.close());
        this.watchers.push(w);
        return true;
      } catch {
        return false;
      }
    };
    this.watchingDir = watch(this.dir);
    if (!this.watchingDir) watch(path.dirname(this.dir));
  }

  private reloadQueued = false;

  /**
   * One reload for a burst of events. machined writes each file as a temporary one renamed
   * into place, so a set of certificates is a dozen or so inotify events; each reload read the
   * files and checked the pair again, about a second of apid's CPU under QEMU/TCG (in-VM
   * profile) just as the node's first API call was due.
   */
  private changed(): void {
    if (this.reloadQueued) return;
    this.reloadQueued = true;
    setImmediate(() => {
      this.reloadQueued = false;
      if (this.stopped) return;
      if (!this.watchingDir && fs.existsSync(this.dir)) {
        for (const w of this.watchers) w.close();
        this.watchers = [];
        this.watch();
      }
      this.reload();
    });
  }

  get certs(): ApidCerts | undefined {
    return this.current;
  }

  /**
   * machined marks maintenance mode (no configuration yet) beside the certificates. Read on
   * every call, never cached: the moment machined removes the marker, calls need a client
   * certificate again.
   */
  get maintenance(): boolean {
    return fs.existsSync(this.marker);
  }

  /** Resolves once certificates are present. */
  ready(): Promise<ApidCerts> {
    if (this.current) return Promise.resolve(this.current);
    return new Promise((resolve) => {
      const once = (c: ApidCerts) => {
        this.changeListeners.delete(once);
        resolve(c);
      };
      this.changeListeners.add(once);
    });
  }

  onChange(fn: (c: ApidCerts) => void): void {
    this.changeListeners.add(fn);
  }

  /** The last set whose pairs did not match: not checked again until a file changes. */
  private mismatched = '';

  reload(): void {
    const c = readApidCerts(this.dir);
    if (!c) return;
    // The same files as the last time: nothing to check (parsing the key and the certificate
    // is the expensive part).
    const fp = [c.ca, c.serverCert, c.serverKey, c.clientCert, c.clientKey].map((b) => b?.toString('base64') ?? '').join('|');
    if (fp === this.fingerprint || fp === this.mismatched) return;
    // machined replaces the files one by one: a set read between two of them is skipped, and
    // the next change (the watch sees each) completes it.
    if (!pairMatches(c.serverCert, c.serverKey) || (c.clientCert && c.clientKey && !pairMatches(c.clientCert, c.clientKey))) {
      this.mismatched = fp;
      return;
    }
    this.fingerprint = fp;
    const first = !this.current;
    this.current = c;
    this.log.info(first ? `certificates loaded from ${this.dir}` : `certificates renewed from ${this.dir}`);
    for (const l of this.caListeners) l({ caCertificate: c.ca });
    for (const l of this.idListeners) l({ certificate: c.serverCert, privateKey: c.serverKey });
    for (const l of [...this.changeListeners]) l(c);
  }

  // grpc-js registers these listeners just before it adds its own watcher, so the current
  // certificates are delivered on the next tick: delivered at once, they would reach nobody.
  addCaCertificateListener(l: CaListener): void {
    this.caListeners.add(l);
    setImmediate(() => this.current && this.caListeners.has(l) && l({ caCertificate: this.current.ca }));
  }
  removeCaCertificateListener(l: CaListener): void {
    this.caListeners.delete(l);
  }
  addIdentityCertificateListener(l: IdListener): void {
    this.idListeners.add(l);
    setImmediate(() => this.current && this.idListeners.has(l) && l({ certificate: this.current.serverCert, privateKey: this.current.serverKey }));
  }
  removeIdentityCertificateListener(l: IdListener): void {
    this.idListeners.delete(l);
  }
}
