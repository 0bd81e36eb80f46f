// Test aid: the typed configuration (the validator's v1alpha1 and kind documents) built from the
// parts a test names, for the functions and controllers that read it. Not validated: a test gives
// a part of a configuration (machine.network alone, a document without apiVersion), not a whole one.
import type { MachineConfigSpec, TypedMachineConfig } from '../contract/resources/machine-config.ts';
import type { KindDocument } from './kinds.ts';
import type { V1Alpha1Config } from './schema.ts';

type DeepPartial<T> = T extends readonly (infer E)[] ? DeepPartial<E>[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** A kind document as a test writes it: apiVersion may be left out. */
export type DocumentPart = KindDocument extends infer D ? (D extends KindDocument ? Omit<D, 'apiVersion'> & { apiVersion?: 'v1alpha1' } : never) : never;

/** The typed view of these parts. */
export function typedConfig(v1alpha1: DeepPartial<V1Alpha1Config> | undefined, documents: DocumentPart[] = []): TypedMachineConfig {
  return {
    ...(v1alpha1 ? { v1alpha1: v1alpha1 as V1Alpha1Config } : {}),
    documents: documents.map((d) => ({ apiVersion: 'v1alpha1', ...d }) as KindDocument),
  };
}

/** A MachineConfig spec of these parts, as machined publishes one (its kept documents: the same parts). */
export function machineConfigSpecOf(v1alpha1: DeepPartial<V1Alpha1Config> | undefined, documents: DocumentPart[] = []): MachineConfigSpec {
  const typed = typedConfig(v1alpha1, documents);
  return { ...typed, data: { ...(typed.v1alpha1 ? { v1alpha1: typed.v1alpha1 } : {}), documents: typed.documents } };
}
