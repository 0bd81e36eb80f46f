// The system volumes' encryption (Talos: SystemDiskEncryption(), a VolumeConfig's encryption):
// machine.systemDiskEncryption of the v1alpha1 document, or a VolumeConfig document's encryption
// for STATE or EPHEMERAL (Talos v1.10+; validation refuses both for one volume). Read from the
// configuration's text, each part checked by its schema, so that machined can read it at boot
// from the configuration kept on STATE before it loads it. machined's alone (it uses the schema).
import YAML from 'yaml';
import { encryptionSchemas, type SystemDiskEncryptionConfig } from '../schema.ts';

/** Each system volume's encryption settings in a configuration's text; undefined when neither is set. Throws on invalid settings. */
export function systemDiskEncryptionOf(configText: string | undefined): SystemDiskEncryptionConfig | undefined {
  if (!configText) return undefined;
  const out: SystemDiskEncryptionConfig = {};
  for (const doc of YAML.parseAllDocuments(configText)) {
    const data = doc.toJS() as { kind?: unknown; name?: unknown; encryption?: unknown; machine?: { systemDiskEncryption?: { state?: unknown; ephemeral?: unknown } } } | null;
    const sde = data?.machine?.systemDiskEncryption;
    if (sde?.state) out.state = encryptionSchemas().encryptionSchema.parse(sde.state);
    if (sde?.ephemeral) out.ephemeral = encryptionSchemas().encryptionSchema.parse(sde.ephemeral);
    if (data?.kind === 'VolumeConfig' && data.encryption && (data.name === 'STATE' || data.name === 'EPHEMERAL')) {
      out[data.name === 'STATE' ? 'state' : 'ephemeral'] = encryptionSchemas().encryptionSchema.parse(data.encryption);
    }
  }
  return out.state || out.ephemeral ? out : undefined;
}
