// MetaWrite and MetaDelete (Talos's MachineService): a key of the META partition, which survives
// reinstalls and resets (src/install/meta.ts). Talos's keys are numbers (uint8, meanings in
// Talos's pkg/machinery/meta/constants.go); Bronze's META is a string-to-string store whose
// keys Bronze mostly manages itself. So each Talos key is, as data (TALOS_META_KEYS):
//   - mapped: it means the same thing in Bronze, and names Bronze's key (the three keys Talos
//     reserves for the user's own metadata);
//   - managed: what it holds Bronze records itself (upgrades, STATE's encryption, wipes), never
//     through this API;
//   - unused: Bronze reads no such thing;
// and any other number is not a Talos key. Refusals are INVALID_ARGUMENT and say which case it
// is. A node without a META partition (no system disk; a host run without BRONZE_META_FILE)
// answers FAILED_PRECONDITION, as does a damaged META (no valid copy: the API does not
// overwrite what boot may still need to see). Values are text (Bronze's META holds strings).
import * as grpc from '@grpc/grpc-js';
import { MetaStore } from '../../install/meta.ts';
import { ApiError, invalidArgument, notFound, unary } from './common.ts';

export type TalosMetaKey =
  | { name: string; mapped: string }
  | { name: string; managed: string }
  | { name: string; unused: string };

/** Talos's META keys by number, and what each is in Bronze. */
export const TALOS_META_KEYS: Readonly<Record<number, TalosMetaKey>> = Object.freeze({
  6: { name: 'Upgrade', managed: 'Bronze records upgrades itself (upgrade.*)' },
  7: { name: 'StagedUpgradeImageRef', managed: 'Bronze records upgrades itself (upgrade.*)' },
  8: { name: 'StagedUpgradeInstallOptions', managed: 'Bronze records upgrades itself (upgrade.*)' },
  9: { name: 'StateEncryptionConfig', managed: "Bronze records STATE's encryption itself (state.encryption), from the machine configuration" },
  10: { name: 'MetalNetworkPlatformConfig', unused: 'Bronze reads no network configuration from META: the network comes from the machine configuration and DHCP' },
  11: { name: 'DownloadURLCode', unused: 'Bronze fetches bronze.config= URLs as they are, with no ${code} variable' },
  12: { name: 'UserReserved1', mapped: 'user.1' },
  13: { name: 'UserReserved2', mapped: 'user.2' },
  14: { name: 'UserReserved3', mapped: 'user.3' },
  15: { name: 'UUIDOverride', unused: "Bronze takes the machine's identity from SMBIOS, the links or STATE, never from META" },
  16: { name: 'UniqueMachineToken', unused: 'Bronze keeps no machine token in META' },
  17: { name: 'DiskImageBootloader', unused: 'Bronze records its install itself (install.*)' },
  18: { name: 'StagedWipeSelectors', managed: 'Bronze records staged wipes itself (wipe.*)' },
});

/** Bronze's META key for Talos key `key`; throws INVALID_ARGUMENT with the reason when there is none. */
export function bronzeMetaKey(key: number): string {
  if (!Number.isInteger(key) || key < 0 || key > 255) throw invalidArgument(`key must be a uint8 (0-255), not ${key}`);
  const k = TALOS_META_KEYS[key];
  const hex = `0x${key.toString(16).padStart(2, '0')}`;
  if (!k) throw invalidArgument(`META key ${key} (${hex}) is not a Talos META key Bronze knows; the keys for your own data are 12, 13 and 14 (UserReserved1-3)`);
  if ('managed' in k) throw invalidArgument(`META key ${key} (${k.name}) is managed by Bronze and cannot be written or deleted through the API: ${k.managed}`);
  if ('unused' in k) throw invalidArgument(`Bronze does not use META key ${key} (${k.name}): ${k.unused}`);
  return k.mapped;
}

export interface MetaApiDeps {
  /** The META partition (or, in a host run, the file named by BRONZE_META_FILE); undefined: none. */
  metaDevice: () => string | undefined;
}

const failedPrecondition = (msg: string) => new ApiError(grpc.status.FAILED_PRECONDITION, msg);

/** Opens META once for a call, refusing when there is none or it is damaged; closed after fn. */
function withMeta<T>(deps: MetaApiDeps, fn: (store: MetaStore) => T): T {
  const dev = deps.metaDevice();
  if (!dev) throw failedPrecondition('this node has no META partition (it runs without a system disk): META keys cannot be written or deleted');
  const store = MetaStore.open(dev);
  try {
    if (store.corrupt) throw failedPrecondition(`META on ${dev} is damaged (no valid copy): not writing to it through the API`);
    return fn(store);
  } finally {
    store.close();
  }
}

export function metaHandlers(deps: MetaApiDeps): Record<string, grpc.handleUnaryCall<any, any>> {
  return {
    MetaWrite: unary((req: { key?: number; value?: Uint8Array }) => {
      const key = bronzeMetaKey(Number(req.key ?? 0));
      let value: string;
      try {
        value = new TextDecoder('utf-8', { fatal: true }).decode(req.value ?? new Uint8Array());
      } catch {
        throw invalidArgument("the value is not UTF-8 text: Bronze's META holds text");
      }
      withMeta(deps, (store) => {
        try {
          store.set({ [key]: value });
        } catch (err) {
          if (/^META: the values take/.test((err as Error).message)) throw new ApiError(grpc.status.RESOURCE_EXHAUSTED, `meta write failed: ${(err as Error).message}`);
          throw err;
        }
      });
      return { messages: [{}] };
    }),
    MetaDelete: unary((req: { key?: number }) => {
      const key = bronzeMetaKey(Number(req.key ?? 0));
      withMeta(deps, (store) => {
        if (store.get(key) === undefined) throw notFound(`meta key not found: ${req.key ?? 0} (${key})`);
        store.delete([key]);
      });
      return { messages: [{}] };
    }),
  };
}
