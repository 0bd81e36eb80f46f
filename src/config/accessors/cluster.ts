// The cluster settings (Talos: Cluster().Endpoint(), Cluster().Name(), Machine().Security()):
// the control-plane endpoint and the cluster's name from v1alpha1 `cluster` or a
// KubeClusterConfig document (Talos 1.14+; validation refuses both), and the machine's own
// credentials (machine.token, machine.ca, machine.certSANs). Types only from the validator.
import type { KubeClusterConfig } from '../kinds.ts';
import type { TypedConfig } from './typed.ts';

const kubeCluster = (c: TypedConfig | undefined) => c?.documents.find((d): d is KubeClusterConfig => d.kind === 'KubeClusterConfig');

/** cluster.controlPlane.endpoint, or a KubeClusterConfig's endpoint. */
export function controlPlaneEndpoint(c: TypedConfig | undefined): string | undefined {
  const endpoint = c?.v1alpha1?.cluster?.controlPlane?.endpoint ?? kubeCluster(c)?.endpoint;
  return typeof endpoint === 'string' ? endpoint : undefined;
}

/** cluster.clusterName, or a KubeClusterConfig's clusterName. */
export function clusterName(c: TypedConfig | undefined): string | undefined {
  const name = c?.v1alpha1?.cluster?.clusterName ?? kubeCluster(c)?.clusterName;
  return typeof name === 'string' ? name : undefined;
}

/** What the node proves itself with: machine.token, machine.ca (base64 PEM), machine.certSANs. */
export interface MachineCredentials {
  token?: string;
  ca?: { crt?: string; key?: string };
  certSANs?: string[];
}

/** The machine's credentials from the v1alpha1 document (undefined without one). */
export function machineCredentials(c: TypedConfig | undefined): MachineCredentials | undefined {
  const m = c?.v1alpha1?.machine;
  if (!m) return undefined;
  return { ...(m.token !== undefined ? { token: m.token } : {}), ...(m.ca ? { ca: m.ca } : {}), ...(m.certSANs ? { certSANs: m.certSANs } : {}) };
}
