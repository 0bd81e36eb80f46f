// @peculiar/x509, loaded after the Reflect metadata polyfill it needs and bound to Node's WebCrypto.
// Every module under src/pki imports x509 from here, never from the package directly.
import './reflect-metadata.ts';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

x509.cryptoProvider.set(webcrypto);

export { x509, webcrypto };
export type CryptoKey = webcrypto.CryptoKey;
