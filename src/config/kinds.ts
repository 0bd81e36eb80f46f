// Typed configuration documents that sit beside the v1alpha1 document in the same YAML stream,
// each `apiVersion: v1alpha1` + `kind` (Talos's multi-document configuration): the kinds Bronze
// implements, as data (kinds-network.ts, kinds-system.ts, kinds-containers.ts, kinds-registries.ts). Kinds Bronze does not implement are
// in policy.ts (ignored, kept for later, or refused as not implemented).
import type { KindSpec } from './kind-spec.ts';
import { CONTAINER_KINDS, type ContainerConfig, type ContainerHealthConfig } from './kinds-containers.ts';
import { REGISTRY_KINDS, type RegistryAuthConfig, type RegistryMirrorConfig, type RegistryTLSConfig } from './kinds-registries.ts';
import { NETWORK_KINDS, type BondConfig, type BridgeConfig, type DHCPv4Config, type HostnameConfig, type LinkConfig, type ResolverConfig, type StaticHostConfig, type TimeSyncConfig } from './kinds-network.ts';
import {
  SYSTEM_KINDS,
  type DiscoveryIdentityConfig,
  type DiscoveryServiceConfig,
  type FilesystemTrimConfig,
  type EnvironmentConfig,
  type KubeClusterConfig,
  type SysctlConfig,
  type UnattendedInstallConfig,
  type VolumeConfig,
} from './kinds-system.ts';

export type { KindEntry, KindSpec, V1Alpha1Conflict } from './kind-spec.ts';
export type { ContainerConfig, ContainerHealthConfig } from './kinds-containers.ts';
export type { RegistryAuthConfig, RegistryMirrorConfig, RegistryTLSConfig } from './kinds-registries.ts';
export type { BondConfig, BridgeConfig, DHCPv4Config, HostnameConfig, LinkConfig, ResolverConfig, StaticHostConfig, TimeSyncConfig } from './kinds-network.ts';
export type { DiscoveryIdentityConfig, DiscoveryServiceConfig, EnvironmentConfig, FilesystemTrimConfig, KubeClusterConfig, SysctlConfig, UnattendedInstallConfig, VolumeConfig } from './kinds-system.ts';

export const KIND_API_VERSION = 'v1alpha1';

export type KindDocument =
  | HostnameConfig
  | ResolverConfig
  | TimeSyncConfig
  | LinkConfig
  | DHCPv4Config
  | StaticHostConfig
  | BondConfig
  | BridgeConfig
  | KubeClusterConfig
  | VolumeConfig
  | FilesystemTrimConfig
  | UnattendedInstallConfig
  | DiscoveryServiceConfig
  | DiscoveryIdentityConfig
  | SysctlConfig
  | EnvironmentConfig
  | ContainerConfig
  | ContainerHealthConfig
  | RegistryMirrorConfig
  | RegistryAuthConfig
  | RegistryTLSConfig;
export type KindName = KindDocument['kind'];

export const KINDS: readonly KindSpec[] = [...NETWORK_KINDS, ...SYSTEM_KINDS, ...CONTAINER_KINDS, ...REGISTRY_KINDS];

export function kindSpec(kind: unknown): KindSpec | undefined {
  return KINDS.find((k) => k.kind === kind);
}

/** The documents of one kind, typed. */
export function documentsOfKind<K extends KindName>(documents: readonly KindDocument[], kind: K): Extract<KindDocument, { kind: K }>[] {
  return documents.filter((d): d is Extract<KindDocument, { kind: K }> => d.kind === kind);
}
