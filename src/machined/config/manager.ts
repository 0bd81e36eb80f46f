// The machine configuration's life in machined: where it is kept (the STATE directory,
// written atomically: a power cut leaves the old or the new file, never half of one), how a
// new one is applied (ApplyConfiguration modes, dry run with a diff), and what can change
// without a reboot.
import fs from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import YAML from 'yaml';
import { writeFileAtomic } from '../../lib/atomic.ts';
import type { Logger } from '../../lib/log.ts';

export type ApplyMode = 'REBOOT' | 'AUTO' | 'NO_REBOOT' | 'STAGED' | 'TRY';

export class ConfigRejected extends Error {
  constructor(
    readonly errors: string[],
    readonly kind: 'invalid' | 'needs-reboot' | 'state' = 'invalid',
  ) {
    super(errors.join('\n'));
  }
}

export interface Validation {
  errors: string[];
  warnings: string[];
}

/** Paths (dotted, into the v1alpha1 document) whose changes are applied live. */
export const LIVE_PATHS: readonly string[] = [
  'machine.network',
  'machine.sysctls',
  'machine.sysfs',
  'machine.time',
  'machine.files',
  'machine.env',
  'machine.certSANs',
  // Pulls read them when they happen: a changed mirror or credential applies to the next pull.
  'machine.registries',
  // As in Talos: read only when installing (a node not yet installed installs at once).
  'machine.install',
  'debug',
];
/** Multi-document kinds, all applied live. */
export const LIVE_KINDS: ReadonlySet<string> = new Set([
  'HostnameConfig',
  'ResolverConfig',
  'TimeSyncConfig',
  'LinkConfig',
  'DHCPv4Config',
  // Containers start, change and stop without a reboot, as in Talos.
  'ContainerConfig',
  'ContainerHealthConfig',
  'RegistryMirrorConfig',
  'RegistryAuthConfig',
  'RegistryTLSConfig',
]);

function documents(text: string): Record<string, unknown>[] {
  return YAML.parseAllDocuments(text).map((d) => (d.toJS() ?? {}) as Record<string, unknown>);
}

function withoutLive(doc: Record<string, unknown>): unknown {
  const copy = structuredClone(doc);
  for (const p of LIVE_PATHS) {
    const keys = p.split('.');
    let node: Record<string, unknown> | undefined = copy;
    for (const k of keys.slice(0, -1)) node = node?.[k] as Record<string, unknown> | undefined;
    if (node) delete node[keys.at(-1)!];
  }
  return copy;
}

/** Which changes between two configurations need a reboot (empty: all live). */
export function rebootReasons(oldText: string | undefined, newText: string): string[] {
  if (oldText === undefined) return [];
  const key = (d: Record<string, unknown>) => (d.kind ? `${d.kind}(${(d.name as string) ?? ''})` : 'v1alpha1');
  const before = new Map(documents(oldText).map((d) => [key(d), d]));
  // A configuration without the v1alpha1 document left the node in maintenance mode: nothing
  // that runs depends on it, so whatever replaces it applies live.
  if (!before.has('v1alpha1') && !documents(oldText).some((d) => d.machine !== undefined || d.cluster !== undefined)) return [];
  const after = new Map(documents(newText).map((d) => [key(d), d]));
  const reasons: string[] = [];
  for (const k of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(k);
    const b = after.get(k);
    if (k !== 'v1alpha1' && LIVE_KINDS.has(String((a ?? b)!.kind))) continue;
    if (!a || !b) {
      reasons.push(`${k} ${a ? 'removed' : 'added'}`);
      continue;
    }
    if (k === 'v1alpha1') {
      const x = withoutLive(a) as Record<string, Record<string, unknown>>;
      const y = withoutLive(b) as Record<string, Record<string, unknown>>;
      for (const section of new Set([...Object.keys(x), ...Object.keys(y)])) {
        const sx = x[section];
        const sy = y[section];
        if (sx && sy && typeof sx === 'object' && typeof sy === 'object') {
          for (const f of new Set([...Object.keys(sx), ...Object.keys(sy)])) {
            if (JSON.stringify(sx[f]) !== JSON.stringify(sy[f])) reasons.push(`${section}.${f} changed`);
          }
        } else if (JSON.stringify(sx) !== JSON.stringify(sy)) reasons.push(`${section} changed`);
      }
    } else if (JSON.stringify(a) !== JSON.stringify(b)) reasons.push(`${k} changed`);
  }
  return reasons;
}

export function configDiff(oldText: string | undefined, newText: string): string {
  return createTwoFilesPatch('current', 'new', oldText ?? '', newText, undefined, undefined, { context: 3 });
}

export interface ApplyResult {
  mode: Exclude<ApplyMode, 'AUTO'>;
  details: string;
  warnings: string[];
  diff?: string;
}

export interface ConfigManagerDeps {
  /** Where the configuration is kept (the STATE partition's mount point). */
  stateDir: string;
  validate: (text: string) => Validation;
  /** Makes the configuration the running one: controllers reconcile it into the system. */
  activate: (text: string) => Promise<void>;
  /**
   * Why a configuration saved now would not be kept (STATE failed to mount: the directory is
   * memory-backed), or undefined when it would. Then a configuration is applied in memory only,
   * and the modes that rely on the saved copy (reboot, staged) are refused.
   */
  notKept?: () => string | undefined;
  reboot: (reason: string) => void;
  log: Logger;
  /**
   * Whether stateDir survives a reboot (STATE on a disk). Default: it does. When it does not
   * (ISO, PXE or a bare kernel: STATE in memory), a mode that reboots would lose the
   * configuration it applies, so those modes are refused (issue 17).
   */
  persistent?: () => boolean;
}

/** Said with every change applied on a node whose STATE is in memory. */
export const VOLATILE_NOTE =
  'STATE is in memory on this node (no installed disk): the configuration lasts until the node reboots or powers off';

export const CONFIG_FILE = 'config.yaml';

export class ConfigManager {
  current: string | undefined;
  private tryTimer: NodeJS.Timeout | undefined;
  private tryPrevious: string | undefined;

  constructor(private readonly d: ConfigManagerDeps) {}

  get file(): string {
    return path.join(this.d.stateDir, CONFIG_FILE);
  }

  /** The persisted configuration, if any. */
  persisted(): string | undefined {
    try {
      return fs.readFileSync(this.file, 'utf8');
    } catch {
      return undefined;
    }
  }

  async persist(text: string): Promise<void> {
    await writeFileAtomic(this.file, text, { mode: 0o600, dirMode: 0o700 });
  }

  validate(text: string): Validation {
    return this.d.validate(text);
  }

  validateOrThrow(text: string): string[] {
    const v = this.d.validate(text);
    if (v.errors.length) throw new ConfigRejected(v.errors);
    return v.warnings;
  }

  async apply(text: string, mode: ApplyMode, opts: { dryRun?: boolean; tryTimeoutMs?: number } = {}): Promise<ApplyResult> {
    const warnings = this.validateOrThrow(text);
    const reasons = rebootReasons(this.current, text);
    let resolved: Exclude<ApplyMode, 'AUTO'> = mode === 'AUTO' ? (reasons.length ? 'REBOOT' : 'NO_REBOOT') : mode;
    if (this.current === undefined && (resolved === 'STAGED' || resolved === 'TRY')) resolved = 'NO_REBOOT'; // maintenance: nothing to stage over
    if ((resolved === 'NO_REBOOT' || resolved === 'TRY') && reasons.length) {
      throw new ConfigRejected([`these changes need a reboot: ${reasons.join('; ')} (use --mode=reboot, auto or staged)`], 'needs-reboot');
    }
    const notKept = this.d.notKept?.();
    if (notKept && (resolved === 'STAGED' || resolved === 'REBOOT')) {
      throw new ConfigRejected(
        [`cannot apply with mode ${resolved.toLowerCase().replace('_', '-')}: ${notKept}, so the node would ${resolved === 'STAGED' ? 'lose the staged configuration' : 'reboot without it'} (mode no-reboot runs it from memory until the next reboot${reasons.length ? `, but these changes need a reboot: ${reasons.join('; ')}` : ''})`],
        'state',
      );
    }
    const persistent = this.d.persistent?.() ?? true;
    if (!persistent && (resolved === 'REBOOT' || resolved === 'STAGED')) {
      const why = mode === 'AUTO' ? ` (auto chose ${resolved.toLowerCase()}: ${reasons.join('; ')})` : '';
      throw new ConfigRejected(
        [
          `mode ${resolved.toLowerCase()}${why} would lose this configuration: ${VOLATILE_NOTE.replace(': the configuration lasts', ', so a configuration lasts')}. ` +
            'Apply it with --mode=no-reboot (it then lasts until power-off), or install Bronze to a disk (machine.install.disk, bronzectl install) to keep it.',
        ],
        'state',
      );
    }
    const diff = configDiff(this.current, text);
    if (opts.dryRun) {
      return { mode: resolved, warnings, diff, details: `Dry run: the configuration would be applied with mode ${resolved}${notKept && resolved === 'NO_REBOOT' ? ', in memory only' : ''}; nothing changed.\n${diff}` };
    }
    if (notKept && resolved === 'NO_REBOOT') {
      this.cancelTry();
      await this.activate(text);
      this.d.log.warn(`configuration applied in memory only: ${notKept}`);
      return { mode: resolved, warnings, details: `Applied in memory only: ${notKept}. This configuration is lost at the next reboot.` };
    }
    switch (resolved) {
      case 'STAGED':
        await this.persist(text);
        return { mode: resolved, warnings, details: 'Staged: the configuration is saved and takes effect at the next boot.' };
      case 'REBOOT':
        await this.persist(text);
        this.d.reboot('configuration applied with a reboot');
        return { mode: resolved, warnings, details: 'Applied: the node reboots into the new configuration.' };
      case 'NO_REBOOT': {
        this.cancelTry();
        await this.persist(text);
        await this.activate(text);
        const note = persistent ? '' : ` ${VOLATILE_NOTE}.`;
        return { mode: resolved, warnings, details: `Applied without a reboot.${note}` };
      }
      case 'TRY': {
        const timeout = opts.tryTimeoutMs && opts.tryTimeoutMs > 0 ? opts.tryTimeoutMs : 60_000;
        this.cancelTry();
        this.tryPrevious = this.current;
        await this.activate(text); // not persisted: a reboot also rolls back
        this.tryTimer = setTimeout(() => void this.rollbackTry(), timeout);
        this.tryTimer.unref();
        return { mode: resolved, warnings, details: `Applied for a try: rolled back in ${Math.round(timeout / 1000)} s unless confirmed (apply it again with --mode=no-reboot).` };
      }
    }
  }

  private cancelTry(): void {
    clearTimeout(this.tryTimer);
    this.tryTimer = undefined;
    this.tryPrevious = undefined;
  }

  private async rollbackTry(): Promise<void> {
    const previous = this.tryPrevious;
    this.cancelTry();
    if (previous === undefined) return;
    this.d.log.warn('try mode: not confirmed in time, rolling the configuration back');
    await this.activate(previous);
  }

  private async activate(text: string): Promise<void> {
    await this.d.activate(text);
    this.current = text;
  }

  /** Boot: the running configuration comes from a source; keep it. */
  async adopt(text: string, persist: boolean): Promise<void> {
    if (persist) await this.persist(text);
    await this.activate(text);
  }
}
