// Checks across the fields of the v1alpha1 document: what one field's value means for another's
// (a controlplane needs the CA key and a worker must not carry it, a route's gateway is of its
// destination's family, an interface is configured once, ...). They read the raw data
// defensively, so they run even where the schema already found something.
import { asArray, asObject, checkRouteFamilies, type Obj, type PathSegment, type Reporter } from './fields.ts';
import { decodeCertificateAndKey } from './formats.ts';
import { formatPath } from './report.ts';
import { checkRegistries } from './kinds-registries.ts';
import { DEVICE_SELECTOR_FIELDS } from './schema.ts';

const q = (v: unknown) => JSON.stringify(v);


function checkRoutes(routes: unknown, base: readonly PathSegment[], report: Reporter): void {
  asArray(routes).forEach((r, k) => {
    const route = asObject(r);
    if (!route) return;
    if (route.network === undefined && route.gateway === undefined) {
      report([...base, k], 'a route needs "network" (its destination), "gateway", or both');
    }
    checkRouteFamilies(route.network, route.gateway, report, [...base, k, 'gateway'], 'network');
  });
}

function checkInterfaces(network: Obj, report: Reporter): void {
  const base = ['machine', 'network', 'interfaces'];
  const seen = new Map<string, number>();
  asArray(network.interfaces).forEach((d, i) => {
    const dev = asObject(d);
    if (!dev || dev.ignore === true) return; // Talos skips the checks of ignored interfaces.
    const hasName = dev.interface !== undefined;
    const selector = dev.deviceSelector;
    if (hasName && selector !== undefined) {
      report([...base, i, 'deviceSelector'], '"interface" and "deviceSelector" are mutually exclusive: name the interface or select it, not both', 'key');
    } else if (!hasName && selector === undefined) {
      report([...base, i], 'either "interface" (its name) or "deviceSelector" must be set');
    }
    const emptySelector = `an empty selector matches nothing: set at least one of ${DEVICE_SELECTOR_FIELDS.join(', ')}`;
    if (asObject(selector) && Object.keys(selector as Obj).length === 0) report([...base, i, 'deviceSelector'], emptySelector, 'key');
    asArray(selector).forEach((s, j) => {
      if (asObject(s) && Object.keys(s as Obj).length === 0) report([...base, i, 'deviceSelector', j], emptySelector);
    });
    if (typeof dev.interface === 'string') {
      const first = seen.get(dev.interface);
      if (first !== undefined) {
        report([...base, i, 'interface'], `duplicate interface ${q(dev.interface)}: it is already configured at ${formatPath('', [...base, first])}; configure each interface once (VLANs go in its "vlans")`);
      } else {
        seen.set(dev.interface, i);
      }
    }
    checkRoutes(dev.routes, [...base, i, 'routes'], report);
    const vlanIds = new Map<unknown, number>();
    asArray(dev.vlans).forEach((v, k) => {
      const vlan = asObject(v);
      if (!vlan) return;
      if (typeof vlan.vlanId === 'number') {
        const first = vlanIds.get(vlan.vlanId);
        if (first !== undefined) report([...base, i, 'vlans', k, 'vlanId'], `duplicate VLAN ${vlan.vlanId} on this interface: already at vlans[${first}]`);
        else vlanIds.set(vlan.vlanId, k);
      }
      checkRoutes(vlan.routes, [...base, i, 'vlans', k, 'routes'], report);
    });
  });
}

/** The key kinds Talos has and Bronze refuses, and why. */
export const REFUSED_KEY_KINDS: Readonly<Record<string, string>> = {
  kms: 'Bronze has no KMS client: the key would have to come from a server it cannot reach',
  tpm: 'Bronze does not seal keys to a TPM',
};

/**
 * One volume's encryption settings (machine.systemDiskEncryption.state/.ephemeral, or a
 * VolumeConfig's encryption): its keys, as Talos checks them (the same messages), and the key
 * kinds Bronze does not have. The shape of each field is the schema's.
 */
export function checkEncryptionKeys(volume: Obj, label: string, base: readonly PathSegment[], report: Reporter): void {
  const keys = asArray(volume.keys);
  if (keys.length === 0) report(volume.keys === undefined ? base : [...base, 'keys'], `partition ${q(label)}: no encryption keys provided`);
  const slots = new Set<unknown>();
  keys.forEach((k, i) => {
    const key = asObject(k);
    if (!key) return;
    if (slots.has(key.slot)) report([...base, 'keys', i, 'slot'], `partition ${q(label)}: encryption key slot ${key.slot} is already in use`);
    slots.add(key.slot);
    const kinds = ['static', 'nodeID', 'kms', 'tpm'].filter((kind) => key[kind] !== undefined && key[kind] !== null);
    if (kinds.length === 0) report([...base, 'keys', i], `partition ${q(label)}: encryption key at slot ${key.slot} doesn't have the configuration parameters: set static or nodeID`);
    if (kinds.length > 1) report([...base, 'keys', i], `partition ${q(label)}: the key at slot ${key.slot} sets ${kinds.join(' and ')}: a key takes its passphrase from one source; give each its own slot`);
    for (const kind of kinds) {
      const why = REFUSED_KEY_KINDS[kind];
      if (why) report([...base, 'keys', i, kind], `not implemented in Bronze: ${why}`, 'key', 'unsupported');
    }
  });
}

function checkDiskEncryption(encryption: Obj, report: Reporter): void {
  for (const [field, label] of [['state', 'STATE'], ['ephemeral', 'EPHEMERAL']] as const) {
    const volume = asObject(encryption[field]);
    if (volume) checkEncryptionKeys(volume, label, ['machine', 'systemDiskEncryption', field], report);
  }
}

/** Checks across the fields of the v1alpha1 document (raw data: they run whatever the schema found). */
export function checkV1Alpha1(root: Obj, report: Reporter): void {
  if (root.persist === false) {
    report(['persist'], 'must be true or left out: the configuration is always kept on the STATE partition (Talos rejects persist: false too)');
  }
  const machine = asObject(root.machine);
  const cluster = asObject(root.cluster);
  const type = machine?.type;
  const ca = asObject(machine?.ca);
  if (ca) {
    const key = ca.key;
    const hasKey = typeof key === 'string' && key !== '';
    if (type === 'controlplane' && !hasKey) {
      report(['machine', 'ca', 'key'], 'the OS CA private key is required on controlplane nodes (they issue the API certificates): set it to the base64 PEM key, as `gen config` writes it');
    }
    if (type === 'worker' && hasKey) {
      report(['machine', 'ca', 'key'], 'the OS CA private key is not allowed on worker nodes, only on controlplane nodes (Talos refuses it too): leave it out or empty');
    }
    if (type === 'controlplane' && hasKey && typeof ca.crt === 'string') {
      const pair = decodeCertificateAndKey(ca.crt, key);
      if (pair?.key && !pair.crt.checkPrivateKey(pair.key)) report(['machine', 'ca', 'key'], 'the key does not belong to machine.ca.crt: use the key of the same CA');
    }
  }
  const network = asObject(machine?.network);
  if (network) checkInterfaces(network, report);
  const encryption = asObject(machine?.systemDiskEncryption);
  if (encryption) checkDiskEncryption(encryption, report);
  const registries = asObject(machine?.registries);
  if (registries) checkRegistries(registries, report);

  const files = new Map<string, number>();
  asArray(machine?.files).forEach((f, i) => {
    const path = asObject(f)?.path;
    if (typeof path !== 'string') return;
    const first = files.get(path);
    if (first !== undefined) report(['machine', 'files', i, 'path'], `duplicate file ${q(path)}: already written by machine.files[${first}]`);
    else files.set(path, i);
  });

  if (!cluster) return;
  if (type === 'worker') {
    const clusterKey = asObject(cluster.ca)?.key;
    if (typeof clusterKey === 'string' && clusterKey !== '') {
      report(['cluster', 'ca', 'key'], 'the cluster CA private key is not allowed on worker nodes, only on controlplane nodes: leave it out or empty');
    }
    if (cluster.etcd !== undefined) report(['cluster', 'etcd'], 'etcd runs only on controlplane nodes: remove cluster.etcd from a worker configuration', 'key');
  }
  const discovery = asObject(cluster.discovery);
  const service = asObject(asObject(discovery?.registries)?.service);
  if (discovery?.enabled === true && service?.disabled !== true) {
    for (const field of ['id', 'secret'] as const) {
      if (cluster[field] === undefined) report(['cluster', field], `required when cluster discovery uses the discovery service (cluster.discovery.enabled): set cluster.${field}, as \`gen config\` writes it`);
    }
  }
}
