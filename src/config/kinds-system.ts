// Typed documents about the node itself that Bronze implements: KubeClusterConfig (Bronze reads
// the control-plane endpoint, where workers find trustd, and the cluster name), VolumeConfig for
// EPHEMERAL's mount options and trim, FilesystemTrimConfig (a periodic fstrim),
// UnattendedInstallConfig (install disk by path), SysctlConfig and EnvironmentConfig (merged over
// machine.sysctls and machine.env), and the discovery documents, validated and kept for the
// cluster work. Field names and defaults are Talos's.
import { z } from '../lib/zod.ts';
import { asObject, bool, byteSize, goDuration, httpEndpoint, httpsEndpoint, keyedMap, nonEmpty, noSpaces, parseByteSize, scalarString, type Obj } from './fields.ts';
import { envNameError, parseGoDuration, sysctlKeyError } from './formats.ts';
import type { KindSpec } from './kind-spec.ts';
import { checkEncryptionKeys } from './checks.ts';
import { encryptionSchemas } from './schema.ts';

/** The volumes Bronze lets a VolumeConfig tune (its layout is fixed): EPHEMERAL, and STATE's encryption. */
export const CONFIGURABLE_VOLUMES = ['EPHEMERAL', 'STATE'] as const;

/** Talos's FilesystemTrimConfig limits: chunks of at least 1 MiB, a minimum extent of at most 128 MiB. */
export const TRIM_MIN_CHUNK = 1024 ** 2;
export const TRIM_MAX_MIN_LENGTH = 128 * 1024 ** 2;

/** The kinds' zod schemas, built on first use (systemKindSchemas()), not when the module loads (as kinds-network.ts's). */
function build() {
  const apiVersion = z.literal('v1alpha1');

  const kubeClusterConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('KubeClusterConfig'),
    clusterName: nonEmpty('clusterName'),
    endpoint: httpsEndpoint(),
  });

  const volumeConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('VolumeConfig'),
    name: nonEmpty('volume name'),
    mount: z
      .strictObject({
        /** nosuid and nodev (Talos's default: true). */
        secure: bool().optional(),
        /** noatime. */
        disableAccessTime: bool().optional(),
      })
      .optional(),
    trim: z.strictObject({ enabled: bool().optional(), interval: goDuration().optional() }).optional(),
    /** Talos v1.10+'s place for it; machine.systemDiskEncryption is the older one (setting both is a conflict). */
    encryption: encryptionSchemas().encryptionSchema.optional(),
  });

  const filesystemTrimConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('FilesystemTrimConfig'),
    interval: goDuration().optional(),
    chunkSize: byteSize('chunk size').optional(),
    chunkDelay: goDuration().optional(),
    minLength: byteSize('minimum length').optional(),
  });

  const unattendedInstallConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('UnattendedInstallConfig'),
    reboot: bool().optional(),
    installer: z.strictObject({ image: noSpaces('installer image').optional() }).optional(),
    provisioning: z
      .strictObject({
        diskSelector: z.strictObject({ match: nonEmpty('diskSelector.match') }).optional(),
        wipe: bool().optional(),
      })
      .optional(),
  });

  const sysctlConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('SysctlConfig'),
    params: keyedMap(scalarString(), sysctlKeyError, 'sysctl key'),
  });

  const environmentConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('EnvironmentConfig'),
    variables: keyedMap(scalarString(), envNameError, 'environment variable name'),
  });

  const discoveryServiceConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('DiscoveryServiceConfig'),
    name: nonEmpty('name'),
    endpoint: httpEndpoint().optional(),
  });

  const discoveryIdentityConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('DiscoveryIdentityConfig'),
    clusterID: nonEmpty('clusterID'),
    clusterSecret: nonEmpty('clusterSecret'),
  });
  return { kubeClusterConfigSchema, volumeConfigSchema, filesystemTrimConfigSchema, unattendedInstallConfigSchema, sysctlConfigSchema, environmentConfigSchema, discoveryServiceConfigSchema, discoveryIdentityConfigSchema };
}

let built: ReturnType<typeof build> | undefined;

/** The schemas of the system kinds, built once, when first asked for. */
export function systemKindSchemas(): ReturnType<typeof build> {
  return (built ??= build());
}

/** `disk.dev_path == "/dev/sda"`: the one disk selector Bronze can evaluate (what `talosctl gen config` writes). */
const DEV_PATH_MATCH = /^\s*disk\.dev_path\s*==\s*"(\/dev\/[^"\s]+)"\s*$/;

/** The install disk an UnattendedInstallConfig selects, when its selector names a device path. */
export function installDiskOf(match: unknown): string | undefined {
  return typeof match === 'string' ? DEV_PATH_MATCH.exec(match)?.[1] : undefined;
}

const present = (v: unknown) => v !== undefined;

export const SYSTEM_KINDS: readonly KindSpec[] = [
  {
    kind: 'KubeClusterConfig',
    get schema() {
      return systemKindSchemas().kubeClusterConfigSchema;
    },
    named: false,
    example: { clusterName: 'demo', endpoint: 'https://10.0.0.1:6443' },
    conflicts: [
      { path: ['cluster', 'clusterName'], isSet: (v) => typeof v === 'string' && v !== '' },
      { path: ['cluster', 'controlPlane', 'endpoint'], isSet: present },
    ],
  },
  {
    kind: 'VolumeConfig',
    get schema() {
      return systemKindSchemas().volumeConfigSchema;
    },
    named: true,
    example: { name: 'EPHEMERAL', mount: { secure: true } },
    check(doc, report) {
      if (typeof doc.name === 'string' && !(CONFIGURABLE_VOLUMES as readonly string[]).includes(doc.name)) {
        report(['name'], "not implemented in Bronze: its volume layout is fixed, only EPHEMERAL's mount options and trim, and EPHEMERAL's and STATE's encryption, can be configured", undefined, 'unsupported');
      }
      if (doc.name === 'STATE') {
        for (const f of ['mount', 'trim']) if (doc[f] !== undefined) report([f], `not implemented in Bronze: STATE's ${f} is fixed; a VolumeConfig for STATE sets its encryption only`, 'key', 'unsupported');
      }
      const encryption = asObject(doc.encryption);
      if (encryption && typeof doc.name === 'string') checkEncryptionKeys(encryption, doc.name, ['encryption'], report);
    },
    conflicts: [
      { path: ['machine', 'systemDiskEncryption', 'ephemeral'], isSet: present, when: 'encryption', name: 'EPHEMERAL' },
      { path: ['machine', 'systemDiskEncryption', 'state'], isSet: present, when: 'encryption', name: 'STATE' },
    ],
  },
  {
    kind: 'FilesystemTrimConfig',
    get schema() {
      return systemKindSchemas().filesystemTrimConfigSchema;
    },
    named: false,
    example: { interval: '168h0m0s' },
    check(doc, report) {
      const chunk = parseByteSize(doc.chunkSize);
      if (chunk !== undefined && chunk !== 0 && chunk < TRIM_MIN_CHUNK) report(['chunkSize'], 'the chunk size cannot be less than 1MiB (or 0: the whole filesystem at once)');
      const min = parseByteSize(doc.minLength);
      if (min !== undefined && min > TRIM_MAX_MIN_LENGTH) report(['minLength'], 'the minimum length cannot be greater than 128MiB');
      if (doc.chunkDelay !== undefined && chunk === undefined) report(['chunkDelay'], 'chunkDelay is only used with chunkSize', 'key');
    },
    conflicts: [],
  },
  {
    kind: 'UnattendedInstallConfig',
    get schema() {
      return systemKindSchemas().unattendedInstallConfigSchema;
    },
    named: false,
    example: { installer: { image: 'https://images.example/upgrade.tar' }, provisioning: { diskSelector: { match: 'disk.dev_path == "/dev/sda"' }, wipe: false } },
    check(doc, report) {
      const match = (doc.provisioning as Obj | undefined)?.diskSelector as Obj | undefined;
      if (match?.match !== undefined && typeof match.match === 'string' && !installDiskOf(match.match)) {
        report(['provisioning', 'diskSelector', 'match'], 'not implemented in Bronze: it selects the install disk by path only (disk.dev_path == "/dev/sda"), not by other CEL expressions', undefined, 'unsupported');
      }
      if (doc.reboot === false) report(['reboot'], 'not implemented in Bronze: the node always reboots into the installed disk', undefined, 'unsupported');
    },
    conflicts: [{ path: ['machine', 'install', 'disk'], isSet: present }],
  },
  {
    // Merged over machine.sysctls, this document winning on the same key (Talos).
    kind: 'SysctlConfig',
    get schema() {
      return systemKindSchemas().sysctlConfigSchema;
    },
    named: false,
    example: { params: { 'net.ipv4.ip_forward': '1' } },
    conflicts: [],
  },
  {
    // Merged over machine.env; several documents may set variables, the last one winning (Talos).
    kind: 'EnvironmentConfig',
    get schema() {
      return systemKindSchemas().environmentConfigSchema;
    },
    named: false,
    repeatable: true,
    example: { variables: { https_proxy: 'http://proxy.example:3128' } },
    conflicts: [],
  },
  {
    kind: 'DiscoveryServiceConfig',
    get schema() {
      return systemKindSchemas().discoveryServiceConfigSchema;
    },
    named: true,
    example: { name: 'default', endpoint: 'https://discovery.talos.dev/' },
    conflicts: [{ path: ['cluster', 'discovery'], isSet: present }],
    keptForLater: 'Bronze has no cluster discovery yet; the setting is stored for the cluster work',
  },
  {
    kind: 'DiscoveryIdentityConfig',
    get schema() {
      return systemKindSchemas().discoveryIdentityConfigSchema;
    },
    named: false,
    example: { clusterID: 'Z6sNbpQ2oEhkVkUPtAbpk1mhFuxS2HIEsAvsV8DQW1E=', clusterSecret: 'bJ0IwnUDBGHoO4D0cNmC7hbBgwLYfO8DKyQX3lzuKnc=' },
    conflicts: [
      { path: ['cluster', 'id'], isSet: present },
      { path: ['cluster', 'secret'], isSet: present },
    ],
    keptForLater: 'Bronze has no cluster discovery yet; the identity is stored for the cluster work',
  },
];

/** Milliseconds of a Go duration field, or undefined. */
export function durationMs(v: unknown): number | undefined {
  return typeof v === 'string' ? parseGoDuration(v) : undefined;
}

type Schemas = ReturnType<typeof build>;
export type KubeClusterConfig = z.output<Schemas['kubeClusterConfigSchema']>;
export type VolumeConfig = z.output<Schemas['volumeConfigSchema']>;
export type FilesystemTrimConfig = z.output<Schemas['filesystemTrimConfigSchema']>;
export type UnattendedInstallConfig = z.output<Schemas['unattendedInstallConfigSchema']>;
export type DiscoveryServiceConfig = z.output<Schemas['discoveryServiceConfigSchema']>;
export type DiscoveryIdentityConfig = z.output<Schemas['discoveryIdentityConfigSchema']>;
export type SysctlConfig = z.output<Schemas['sysctlConfigSchema']>;
export type EnvironmentConfig = z.output<Schemas['environmentConfigSchema']>;
