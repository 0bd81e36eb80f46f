// The install settings of a configuration: machine.install, or (Talos 1.14+) an
// UnattendedInstallConfig whose disk selector names a device path. Read from the documents as
// data, so that machined's installer and the validator agree on them.
import { parseYamlStream } from '../document.ts';
import { asArray, asObject, type Obj } from '../fields.ts';
import { installDiskOf } from '../kinds-system.ts';

export interface InstallSettings {
  disk: string;
  image?: string;
  wipe: boolean;
  extraKernelArgs: string[];
}

/** From the documents as data (the v1alpha1 one has no `kind`). */
export function installOfDocuments(documents: readonly unknown[]): InstallSettings | undefined {
  const objs = documents.map(asObject).filter((d): d is Obj => d !== undefined);
  const v1 = objs.find((d) => d.kind === undefined && d.apiVersion === undefined);
  const install = asObject(asObject(v1?.machine)?.install);
  if (typeof install?.disk === 'string') {
    return {
      disk: install.disk,
      ...(typeof install.image === 'string' ? { image: install.image } : {}),
      wipe: install.wipe === true,
      extraKernelArgs: asArray(install.extraKernelArgs).filter((a): a is string => typeof a === 'string'),
    };
  }
  const unattended = objs.find((d) => d.kind === 'UnattendedInstallConfig');
  if (!unattended) return undefined;
  const provisioning = asObject(unattended.provisioning);
  const disk = installDiskOf(asObject(provisioning?.diskSelector)?.match);
  const image = asObject(unattended.installer)?.image;
  // Talos's default for an UnattendedInstallConfig: wipe the disk.
  return disk ? { disk, ...(typeof image === 'string' ? { image } : {}), wipe: provisioning?.wipe !== false, extraKernelArgs: [] } : undefined;
}

/** From a configuration's text; undefined when it has none (or is not YAML). */
export function installOfText(text: string): InstallSettings | undefined {
  const stream = parseYamlStream(text);
  return stream.errors.length ? undefined : installOfDocuments(stream.documents.map((d) => d.value));
}
