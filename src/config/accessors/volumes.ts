// The volumes' settings from the documents that configure them (Talos: Volumes(),
// FilesystemTrimConfig()): a VolumeConfig per system volume (its mount options, its trim) and the
// node-wide FilesystemTrimConfig. Types only from the validator: a daemon may import this.
// A volume's encryption is read from the configuration's text (encryption.ts), machined's alone.
import type { FilesystemTrimConfig, VolumeConfig } from '../kinds.ts';
import type { TypedConfig } from './typed.ts';

/** The VolumeConfig document of the volume `name` (EPHEMERAL, STATE, ...), if any. */
function volumeConfig(c: TypedConfig | undefined, name: string): VolumeConfig | undefined {
  return c?.documents.find((d): d is VolumeConfig => d.kind === 'VolumeConfig' && d.name === name);
}

/** The FilesystemTrimConfig document (the node-wide trim schedule), if any. */
export function filesystemTrim(c: TypedConfig | undefined): FilesystemTrimConfig | undefined {
  return c?.documents.find((d): d is FilesystemTrimConfig => d.kind === 'FilesystemTrimConfig');
}

/** A volume's own trim settings (its VolumeConfig's `trim`). */
export function volumeTrim(c: TypedConfig | undefined, name: string): VolumeConfig['trim'] {
  return volumeConfig(c, name)?.trim;
}

/** EPHEMERAL's mount options: `mount.disableAccessTime` (noatime). */
export function ephemeralMount(c: TypedConfig | undefined): { disableAccessTime: boolean } {
  return { disableAccessTime: volumeConfig(c, 'EPHEMERAL')?.mount?.disableAccessTime === true };
}
