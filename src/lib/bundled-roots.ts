// Node's bundled root certificates (Mozilla's) as the default CA store, for the HTTPS fetches a
// node makes to servers it has no CA of its own for: a configuration (bronze.config=https://...)
// or an image from a URL. Every role runs with `--use-openssl-ca` (ROLE_NODE_OPTIONS, in
// machined/service-graph.ts), so that loading `tls` does not parse those certificates in a thread
// in every process; OpenSSL's own store, which that option selects, is empty on a node (no
// /etc/ssl). So the first such fetch sets them here, once, before it connects.
import tls from 'node:tls';

/** Node 24's API (the image's runtime), newer than the @types/node the project builds against. */
interface CaStore {
  getCACertificates?(type: 'bundled'): string[];
  setDefaultCACertificates?(certs: string[]): void;
}

let set = false;

/**
 * Makes Node's bundled root certificates the default CA store, if `url` is HTTPS (once). On a
 * Node without the API (a host's older Node, in tests) the bundled ones are the default already.
 */
export function trustBundledRootsFor(url: string): void {
  if (set || !/^https:/i.test(url)) return;
  const store = tls as CaStore;
  if (store.getCACertificates && store.setDefaultCACertificates) store.setDefaultCACertificates(store.getCACertificates('bundled'));
  set = true;
}
