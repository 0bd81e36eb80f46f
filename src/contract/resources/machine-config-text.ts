// A machine configuration's text and the documents it holds (MachineConfigs' spec, as kept): a
// YAML stream of the v1alpha1 document and the kind documents. Plain YAML, no validator: the
// typed form is machined's (machined/config/spec.ts), which the daemons read as ParsedMachineConfigs.
import YAML from 'yaml';
import type { MachineConfigDocuments } from './machine-config.ts';

/** The documents of a configuration's text (its warning comments skipped). */
export function machineConfigDocuments(text: string): MachineConfigDocuments {
  const docs = YAML.parseAllDocuments(text).map((d) => (d.toJS() ?? {}) as Record<string, unknown>);
  const v1alpha1 = docs.find((d) => d.version === 'v1alpha1');
  return { data: { ...(v1alpha1 ? { v1alpha1 } : {}), documents: docs.filter((d) => d.kind) } };
}

/**
 * The configuration as a YAML stream: the validator's warnings as comments (`# warning: ...`,
 * which any YAML reader skips), the v1alpha1 document, then each kind document.
 */
export function machineConfigText(spec: MachineConfigDocuments): string {
  const docs = [spec.data.v1alpha1, ...spec.data.documents].filter((d) => d && Object.keys(d).length > 0);
  const notes = (spec.warnings ?? []).map((w) => `# warning: ${w.replace(/\n/g, ' ')}\n`).join('');
  return notes + docs.map((d) => YAML.stringify(d, { lineWidth: 0 })).join('---\n');
}
