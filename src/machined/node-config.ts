// The node's configuration and the identity that follows from it, from boot to live changes:
//   boot:   STATE (a configuration applied before) → kernel arguments → maintenance mode
//   apply:  ApplyConfiguration (validated; modes auto/no-reboot/reboot/staged/try; dry run)
// Activating a configuration publishes it as the MachineConfig resource (controllers
// reconcile it into the system) and its typed form as ParsedMachineConfig (which networkd and
// timed read), gives apid and trustd their certificates, and ends
// maintenance mode. A configuration that fails validation at boot leaves the node in
// maintenance mode, its errors on the console and in the machinestatus resource.
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
import { nodeIdentity, type NodeIdentity } from './config/identity.ts';
import { ConfigManager, ConfigRejected, VOLATILE_NOTE, type ApplyMode, type Validation } from './config/manager.ts';
import { acquireConfig } from './config/source.ts';
import { parsedConfig, validated } from './config/parsed.ts';
import type { Cmdline } from './cmdline.ts';

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
}

/** Why a configuration written to the STATE directory would not be kept: STATE failed to mount. */
export function stateNotKept(v: VolumeStatusSpec | undefined): string | undefined {
  if (v?.phase !== 'failed') return undefined;
  return `STATE${v.location ? ` (${v.location})` : ''} cannot be mounted (${(v.errorMessage ?? 'not mounted').replace(/; repair it with .*$/, '')}); ${repairAdvice('STATE')}`;
}

const OWNER = 'machined';

/** Whether a (valid) configuration has the v1alpha1 document. */
function hasV1Alpha1(text: string): boolean {
  const r = validated(text);
  return r.ok && r.config.data.v1alpha1 !== undefined;
}

export class NodeConfig {
  identity: NodeIdentity | undefined;
  private apiCerts: ApiCertificates | undefined;
  readonly manager: ConfigManager;
  /** machined's own resource MachineConfig, written as "machined". */
  private readonly publisher: StatePublisher;

  constructor(private readonly o: NodeConfigOptions) {
    this.publisher = new StatePublisher(o.state, OWNER);
    this.manager = new ConfigManager({
      stateDir: o.stateDir,
      validate: (text) => {
        const v = o.validate(text);
        // What the node itself needs, on top of the schema; once the schema holds (else the same
        // field would be reported twice, in two wordings). A configuration of typed documents
        // alone is valid: it is applied, and the node stays in maintenance mode.
        if (v.errors.length) return v;
        if (!hasV1Alpha1(text)) {
          if (this.identity) return { errors: ['no v1alpha1 document: a configured node keeps its identity (machine.type, token, ca); include the v1alpha1 document'], warnings: v.warnings };
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

  /** Finds the configuration at boot; without a valid one the node enters maintenance mode. */
  async boot(cmdline: Cmdline, hostRunFile?: string): Promise<void> {
    const { log } = this.o;
    let text: string | undefined;
    let source = '';
    let persist = false;
    const stored = this.manager.persisted();
    try {
      if (hostRunFile) [text, source] = [fs.readFileSync(hostRunFile, 'utf8'), hostRunFile];
      else if (stored !== undefined) [text, source] = [stored, `STATE (${this.manager.file})`];
      else {
        const got = await acquireConfig(cmdline, log);
        if (got) [text, source, persist] = [got.text, got.source, true];
      }
    } catch (err) {
      log.error(`machine configuration: ${(err as Error).message}`);
    }
    if (text === undefined) {
      const broken = stateNotKept(this.o.stateVolume?.());
      return this.enterMaintenance([broken ? `no machine configuration: ${broken}` : 'no machine configuration (STATE, bronze.config=, bronze.config.inline=)']);
    }
    const v = this.manager.validate(text);
    if (v.errors.length) {
      log.error(`machine configuration from ${source} is invalid:\n${v.errors.join('\n')}`);
      return this.enterMaintenance(v.errors.map((e) => `invalid configuration from ${source}: ${e}`));
    }
    await this.manager.adopt(text, persist);
    for (const w of v.warnings) log.warn(`machine configuration: ${w}`);
    if (this.identity) log.info(`configuration from ${source}: ${this.identity.type}${this.identity.clusterName ? ` of cluster ${this.identity.clusterName}` : ''}`);
  }

  private async enterMaintenance(reasons: string[]): Promise<void> {
    const { log, secretsDir } = this.o;
    const dir = path.join(secretsDir, 'apid');
    // A throwaway self-signed identity: clients connect with --insecure. Made without the X.509
    // library, which costs more than a second under emulation (pki/self-signed.ts).
    const names = certificateNames({ type: 'worker', ca: { crt: '' }, token: '', certSANs: [] }, [...nodeAddresses(), ...this.o.extraAddresses()], os.hostname());
    const server = selfSignedServerCert({ commonName: MAINTENANCE_CA_COMMON_NAME, dnsNames: names.dns, ipAddresses: names.ips, ttlMs: 7 * 24 * 3600_000 });
    const ca = { crt: server.crt };
    await writeFileAtomic(path.join(dir, MAINTENANCE_MARKER), reasons.join('\n') + '\n');
    await writeFileAtomic(path.join(dir, 'ca.crt'), ca.crt);
    await writeFileAtomic(path.join(dir, 'server.key'), server.key);
    await writeFileAtomic(path.join(dir, 'server.crt'), server.crt);
    await this.o.status.report('config', reasons);
    await this.o.status.setStage('maintenance');
    log.warn(`maintenance mode: ${reasons.join('; ')}`);
    log.warn('waiting for a configuration: bronzectl apply-config --insecure -n <node address> -f <config.yaml>');
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
      });
      await this.apiCerts.start();
    }
    if (wasMaintenance) {
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
