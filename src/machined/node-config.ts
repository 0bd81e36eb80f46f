// The node's configuration and the identity that follows from it, from boot to live changes:
//   boot:   STATE (a configuration applied before) → kernel arguments → maintenance mode, but
//           only for a node never configured (recovery.ts: a configured node reports the
//           failure and keeps its API authenticated, with its recovery identity)
//   apply:  ApplyConfiguration (validated; modes auto/no-reboot/reboot/staged/try; dry run)
// Activating a configuration publishes it as the MachineConfig resource (controllers
// reconcile it into the system) and its typed form as ParsedMachineConfig (which networkd and
// timed read), gives apid and trustd their certificates, and ends
// maintenance mode. A configuration that fails validation at boot is reported (console,
// the machinestatus resource, an event) and the node waits, its API authenticated.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAINTENANCE_MARKER } from '../contract/maintenance.ts';
import { MAINTENANCE_CA_COMMON_NAME } from '../contract/maintenance.ts';
import { writeFileAtomic } from '../lib/atomic.ts';
import type { Logger } from '../lib/log.ts';
import { selfSignedServerCert } from '../pki/self-signed.ts';
import type { State } from '../state/state.ts';
import { StatePublisher } from '../daemon/publisher.ts';
import { unavailable, invalidArgument } from './api/common.ts';
import type { MachineStatusReporter } from './machine-status.ts';
import type { VolumeStatusSpec } from './volume-status.ts';
import { repairAdvice } from './volumes.ts';
import { ApiCertificates, certificateNames, nodeAddresses } from './apicerts.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE } from '../contract/resources/machine-config.ts';
import { PARSED_MACHINE_CONFIG_ID, PARSED_MACHINE_CONFIG_NS, PARSED_MACHINE_CONFIG_TYPE } from '../contract/resources/parsed-machine-config.ts';
import { machineConfigSpec, parsedMachineConfigSpec } from './config/spec.ts';
import { machineCredentials } from '../config/accessors/cluster.ts';
import { nodeIdentity, type NodeIdentity } from './config/identity.ts';
import { ConfigManager, ConfigRejected, VOLATILE_NOTE, type ApplyMode, type Validation } from './config/manager.ts';
import { acquireConfig } from './config/source.ts';
import { parsedConfig, validated } from './config/parsed.ts';
import type { Cmdline } from './cmdline.ts';
import { RecoveryRecorder, isConfigured, kernelArgumentsAllowed, recoveryIdentityAtBoot, type ConfiguredRecord, type RecordStore } from './recovery.ts';
import type { EventType } from './api/events.ts';

export interface NodeConfigOptions {
  state: State;
  log: Logger;
  secretsDir: string;
  stateDir: string;
  validate: (text: string) => Validation;
  reboot: (reason: string) => void;
  /** Extra names for the API certificate (apid's listen address in host runs). */
  extraAddresses: () => string[];
  certTtlMs: number;
  certCheckMs: number;
  trustdPort: number;
  /** Called with each configuration made active (boot, ApplyConfiguration). */
  onActivated?: (text: string) => void;
  /** Whether STATE survives a reboot (see ConfigManagerDeps.persistent). */
  statePersistent?: () => boolean;
  /** The machine's stage and conditions (MachineStatus): 'config' is this class's. */
  status: MachineStatusReporter;
  /** What became of the STATE volume at boot (undefined: not known, as in host runs). */
  stateVolume?: () => VolumeStatusSpec | undefined;
  /** What ApplyConfiguration's reply adds about an install the configuration starts. */
  installNotice?: (text: string) => string | undefined;
  /** META, where the node's configuration record and recovery identity are kept (undefined: none). */
  meta?: () => RecordStore | undefined;
  /** Publishes an event on the machine's event stream (a configuration that cannot be used at boot). */
  event?: (type: Extract<EventType, 'machine.ConfigLoadErrorEvent'>, error: string) => void;
}

/** What the console and the 'config' condition tell the operator of a configured node left without its configuration. */
export const LOCKED_ADVICE =
  'the node was configured, so its API stays authenticated (no maintenance mode): with your client configuration, repair STATE (`bronzectl repair STATE`), ' +
  'erase it and start over (`bronzectl reset --system-labels-to-wipe STATE --reboot`), or apply a configuration (`bronzectl apply-config -f <config.yaml>`)';

/** Why a configuration written to the STATE directory would not be kept: STATE failed to mount. */
export function stateNotKept(v: VolumeStatusSpec | undefined): string | undefined {
  if (v?.phase !== 'failed') return undefined;
  return `STATE${v.location ? ` (${v.location})` : ''} cannot be mounted (${(v.errorMessage ?? 'not mounted').replace(/; repair it with .*$/, '')}); ${repairAdvice('STATE')}`;
}

const OWNER = 'machined';

/** Whether a (valid) configuration has the v1alpha1 document (where the machine's credentials are). */
function hasV1Alpha1(text: string): boolean {
  const r = validated(text);
  return r.ok && machineCredentials(r.config) !== undefined;
}

export class NodeConfig {
  identity: NodeIdentity | undefined;
  private apiCerts: ApiCertificates | undefined;
  readonly manager: ConfigManager;
  /** META's configuration record and recovery identity. */
  readonly recovery: RecoveryRecorder;
  /** Why the node, configured, has no usable configuration (undefined: it has one, or it is open). */
  locked: string[] | undefined;
  /** machined's own resource MachineConfig, written as "machined". */
  private readonly publisher: StatePublisher;

  constructor(private readonly o: NodeConfigOptions) {
    this.publisher = new StatePublisher(o.state, OWNER);
    this.recovery = new RecoveryRecorder({
      store: () => o.meta?.(),
      persistent: () => (o.statePersistent ? o.statePersistent() : true) && stateNotKept(o.stateVolume?.()) === undefined,
      log: o.log,
      hostname: () => os.hostname(),
    });
    this.manager = new ConfigManager({
      stateDir: o.stateDir,
      validate: (text) => {
        const v = o.validate(text);
        // What the node itself needs, on top of the schema; once the schema holds (else the same
        // field would be reported twice, in two wordings). A configuration of typed documents
        // alone is valid: it is applied, and the node stays in maintenance mode.
        if (v.errors.length) return v;
        if (!hasV1Alpha1(text)) {
          if (this.identity || this.locked) return { errors: ['no v1alpha1 document: a configured node keeps its identity (machine.type, token, ca); include the v1alpha1 document'], warnings: v.warnings };
          return v;
        }
        try {
          nodeIdentity(text);
        } catch (err) {
          return { errors: [...v.errors, (err as Error).message], warnings: v.warnings };
        }
        return v;
      },
      activate: (text) => this.activate(text),
      notKept: () => stateNotKept(o.stateVolume?.()),
      reboot: o.reboot,
      log: o.log,
      ...(o.statePersistent ? { persistent: o.statePersistent } : {}),
    });
  }

  get maintenance(): boolean {
    return this.identity === undefined;
  }

  /**
   * Finds the configuration at boot. Without a usable one, a node never configured enters
   * maintenance mode; a configured one (recovery.ts) reports why and waits, its API
   * authenticated with its recovery identity.
   */
  async boot(cmdline: Cmdline, hostRunFile?: string): Promise<void> {
    const { log } = this.o;
    let text: string | undefined;
    let source = '';
    let persist = false;
    // A host run's file stands in for STATE.
    let stored: string | undefined;
    if (hostRunFile) {
      try {
        stored = fs.readFileSync(hostRunFile, 'utf8');
      } catch (err) {
        log.error(`machine configuration: ${(err as Error).message}`);
      }
    } else stored = this.manager.persisted();
    const record = this.recovery.read();
    const broken = stateNotKept(this.o.stateVolume?.());
    if (stored !== undefined) [text, source] = [stored, hostRunFile ?? `STATE (${this.manager.file})`];
    else if (!hostRunFile && kernelArgumentsAllowed(record, false, broken !== undefined)) {
      try {
        const got = await acquireConfig(cmdline, log);
        if (got) [text, source, persist] = [got.text, got.source, true];
      } catch (err) {
        log.error(`machine configuration: ${(err as Error).message}`);
      }
    }
    const configured = isConfigured(record, stored !== undefined);
    if (text === undefined) {
      if (configured) {
        const why = broken ? `the machine configuration cannot be read: ${broken}` : `no machine configuration on STATE (${this.manager.file}), although META records that this node was configured`;
        return this.lock([why], record, undefined);
      }
      return this.enterMaintenance([broken ? `no machine configuration: ${broken}` : 'no machine configuration (STATE, bronze.config=, bronze.config.inline=)']);
    }
    const v = this.manager.validate(text);
    if (v.errors.length) {
      log.error(`machine configuration from ${source} is invalid:\n${v.errors.join('\n')}`);
      const reasons = v.errors.map((e) => `invalid configuration from ${source}: ${e}`);
      if (configured) return this.lock(reasons, record, stored);
      return this.enterMaintenance(reasons);
    }
    await this.manager.adopt(text, persist);
    for (const w of v.warnings) log.warn(`machine configuration: ${w}`);
    if (this.identity) log.info(`configuration from ${source}: ${this.identity.type}${this.identity.clusterName ? ` of cluster ${this.identity.clusterName}` : ''}`);
    else if (record?.configured) {
      // Typed documents alone: no identity. A configured node still does not open its API.
      return this.lock([`the configuration from ${source} has no v1alpha1 document (machine.type, token, ca)`], record, undefined);
    } else return this.enterMaintenance([`the configuration from ${source} has typed documents only: the node needs the v1alpha1 document (machine.type, token, ca) to leave maintenance mode`]);
  }

  /**
   * A configured node without a usable configuration: reported on the console, in the 'config'
   * condition and as an event (Talos's ConfigLoadErrorEvent, which Talos also sends for a
   * configuration on STATE that does not validate); apid serves the recovery identity (client certificates from
   * the OS CA required), or nothing when there is none. Never maintenance mode.
   */
  private async lock(reasons: string[], record: ConfiguredRecord | undefined, invalidConfig: string | undefined): Promise<void> {
    const { log } = this.o;
    let served: string;
    try {
      const id = await recoveryIdentityAtBoot(record, invalidConfig, { names: this.apidNames(), hostname: os.hostname(), ttlMs: this.o.certTtlMs });
      if ('why' in id) {
        served = `the API serves nothing: no recovery identity (${id.why}); without one the node cannot prove who it is, and it never serves an unauthenticated API: repair or erase the disk from other media (the ISO)`;
      } else {
        fs.rmSync(path.join(this.o.secretsDir, 'apid', MAINTENANCE_MARKER), { force: true });
        await this.serveApid(id.ca, id.crt, id.key);
        served = `the API serves ${id.from}: it requires client certificates signed by the OS CA`;
      }
    } catch (err) {
      served = `the API serves nothing: the recovery identity could not be written (${(err as Error).message})`;
    }
    this.locked = [...reasons, served];
    await this.o.status.report('config', [...reasons, `${served}; ${LOCKED_ADVICE}`]);
    // Not maintenance (Talos has no stage for this): the boot did not get further.
    if (this.o.status.stage === 'maintenance') await this.o.status.setStage('booting');
    for (const r of reasons) {
      log.error(`configuration unavailable: ${r}`);
      this.o.event?.('machine.ConfigLoadErrorEvent', r);
    }
    (served.startsWith('the API serves nothing') ? log.error : log.warn).call(log, `configuration unavailable: ${served}`);
    log.error(`configuration unavailable: ${LOCKED_ADVICE}`);
  }

  private async enterMaintenance(reasons: string[]): Promise<void> {
    const { log } = this.o;
    // A throwaway self-signed identity: clients connect with --insecure. Made without the X.509
    // library, which costs more than a second under emulation (pki/self-signed.ts).
    const names = this.apidNames();
    const server = selfSignedServerCert({ commonName: MAINTENANCE_CA_COMMON_NAME, dnsNames: names.dns, ipAddresses: names.ips, ttlMs: 7 * 24 * 3600_000 });
    await writeFileAtomic(path.join(this.o.secretsDir, 'apid', MAINTENANCE_MARKER), reasons.join('\n') + '\n');
    await this.serveApid(server.crt, server.crt, server.key);
    await this.o.status.report('config', reasons);
    await this.o.status.setStage('maintenance');
    log.warn(`maintenance mode: ${reasons.join('; ')}`);
    log.warn('waiting for a configuration: bronzectl apply-config --insecure -n <node address> -f <config.yaml>');
  }

  /** The names apid's certificate carries when the node has no identity (no certSANs): its addresses and host name. */
  private apidNames(): { ips: string[]; dns: string[] } {
    return certificateNames({ type: 'worker', ca: { crt: '' }, token: '', certSANs: [] }, [...nodeAddresses(), ...this.o.extraAddresses()], os.hostname());
  }

  /** Gives apid the identity it serves (key before certificate, as ApiCertificates writes them). */
  private async serveApid(ca: string, crt: string, key: string): Promise<void> {
    const dir = path.join(this.o.secretsDir, 'apid');
    await writeFileAtomic(path.join(dir, 'ca.crt'), ca);
    await writeFileAtomic(path.join(dir, 'server.key'), key);
    await writeFileAtomic(path.join(dir, 'server.crt'), crt);
  }

  /** Makes `text` (already validated) the running configuration. */
  private async activate(text: string): Promise<void> {
    const wasMaintenance = this.maintenance;
    const parsed = parsedConfig(text);
    await this.publisher.apply(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID, machineConfigSpec(parsed));
    // The same configuration, typed, for the daemons (they load no validator).
    await this.publisher.apply(PARSED_MACHINE_CONFIG_NS, PARSED_MACHINE_CONFIG_TYPE, PARSED_MACHINE_CONFIG_ID, parsedMachineConfigSpec(parsed));
    if (!hasV1Alpha1(text)) {
      // Typed documents alone (network, time, ...): applied, but the node has no identity yet.
      const reason = 'the configuration has typed documents only: the node needs the v1alpha1 document (machine.type, token, ca) to leave maintenance mode';
      this.o.log.warn(`maintenance mode: ${reason}`);
      await this.o.status.report('config', [reason]);
      await this.o.status.setStage('maintenance');
      this.o.onActivated?.(text);
      return;
    }
    const identity = nodeIdentity(text);
    if (JSON.stringify(identity) !== JSON.stringify(this.identity)) {
      this.apiCerts?.stop();
      this.identity = identity;
      this.apiCerts = new ApiCertificates(identity, this.o.log, {
        secretsDir: this.o.secretsDir,
        addresses: () => [...nodeAddresses(), ...this.o.extraAddresses()],
        ttlMs: this.o.certTtlMs,
        checkEveryMs: this.o.certCheckMs,
        trustdPort: this.o.trustdPort,
        // META's recovery identity follows apid's certificate (recovery.ts).
        onIssued: (issued) => void this.recovery.issued(identity, issued),
      });
      await this.apiCerts.start();
    }
    this.recovery.activated();
    if (this.locked) {
      this.locked = undefined;
      this.o.log.info('configuration applied: the node has its configuration again');
    } else if (wasMaintenance) {
      fs.rmSync(path.join(this.o.secretsDir, 'apid', MAINTENANCE_MARKER), { force: true });
      this.o.log.info('left maintenance mode: the API now requires client certificates');
    }
    await this.o.status.report('config', []);
    if (this.o.status.stage === 'maintenance' || this.o.status.stage === 'booting') await this.o.status.setStage('running');
    this.o.onActivated?.(text);
  }

  stop(): void {
    this.apiCerts?.stop();
  }

  /** The ApplyConfiguration RPC. */
  async applyConfiguration(req: { data?: Uint8Array; mode?: string; dry_run?: boolean; try_mode_timeout?: { seconds?: string | number } | null }) {
    const text = Buffer.from(req.data ?? []).toString('utf8');
    if (!text.trim()) throw invalidArgument('the configuration is empty');
    const mode = (req.mode ?? 'REBOOT') as ApplyMode;
    // Asked before applying: activating the configuration starts the install.
    const installNotice = this.o.installNotice?.(text);
    try {
      const r = await this.manager.apply(text, this.maintenance && mode === 'REBOOT' ? 'NO_REBOOT' : mode, {
        dryRun: req.dry_run,
        tryTimeoutMs: Number(req.try_mode_timeout?.seconds ?? 0) * 1000,
      });
      // An install the configuration starts runs after this reply: say so.
      const notice = !req.dry_run && (r.mode === 'NO_REBOOT' || r.mode === 'TRY') ? installNotice : undefined;
      // Installed, the configuration is kept on the disk: no "lasts until power-off" then.
      const details = notice ? `${r.details.replace(` ${VOLATILE_NOTE}.`, '')}\n${notice}` : r.details;
      this.o.log.info(`ApplyConfiguration: ${details.split('\n')[0]}`);
      return { messages: [{ warnings: r.warnings, mode: r.mode, mode_details: details }] };
    } catch (err) {
      // The status comes from api/status.ts (invalid: INVALID_ARGUMENT; needs a reboot, or cannot be kept: FAILED_PRECONDITION).
      if (err instanceof ConfigRejected) throw new Error(`configuration refused:\n${err.errors.join('\n')}`, { cause: err });
      throw err;
    }
  }

  /** The GenerateClientConfiguration RPC: a client certificate from the OS CA. */
  async generateClientConfiguration(req: { roles: string[]; crt_ttl?: { seconds: string | number } | null }) {
    const id = this.identity;
    if (!id?.ca.key) throw unavailable('this node has no OS CA key (no configuration yet, or a worker)');
    const ttlSeconds = Number(req.crt_ttl?.seconds ?? 0);
    const { newClientConfig, serializeClientConfig } = await import('../contract/clientconfig.ts');
    const cfg = await newClientConfig({
      contextName: id.clusterName ?? 'bronze',
      endpoints: [],
      ca: { crt: id.ca.crt, key: id.ca.key },
      roles: req.roles,
      ttlMs: (ttlSeconds > 0 ? ttlSeconds : 365 * 24 * 3600) * 1000,
    });
    const ctx = cfg.contexts[cfg.context]!;
    return { ca: Buffer.from(ctx.ca), crt: Buffer.from(ctx.crt), key: Buffer.from(ctx.key), talosconfig: Buffer.from(serializeClientConfig(cfg)) };
  }
}
