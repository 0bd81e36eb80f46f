// The machine's own settings, each resolved from the v1alpha1 document and the documents that
// replace or extend it, as Talos resolves them (pkg/machinery/config/config: Machine().Sysctls(),
// Machine().Env(), Machine().Files()). Types only from the validator: a daemon may import this.
import type { MachineFile } from '../schema.ts';
import type { TypedConfig } from './typed.ts';

/** machine.sysctls, with Talos's SysctlConfig documents over them (a document wins on a key). */
export function sysctls(c: TypedConfig | undefined): Record<string, string> {
  const want: Record<string, string> = {};
  Object.assign(want, c?.v1alpha1?.machine.sysctls);
  for (const d of c?.documents ?? []) if (d.kind === 'SysctlConfig') Object.assign(want, d.params);
  return want;
}

/** machine.env, with Talos's EnvironmentConfig documents over it, in order (the last one wins). */
export function environment(c: TypedConfig | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  Object.assign(env, c?.v1alpha1?.machine.env);
  for (const d of c?.documents ?? []) if (d.kind === 'EnvironmentConfig') Object.assign(env, d.variables);
  return env;
}

/** machine.files (the validator keeps only those under /var/). */
export function files(c: TypedConfig | undefined): readonly MachineFile[] {
  return c?.v1alpha1?.machine.files ?? [];
}
