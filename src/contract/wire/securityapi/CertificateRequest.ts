// Original file: protos/security/security.proto


export interface CertificateRequest {
  'csr'?: (Buffer | Uint8Array | string);
}

export interface CertificateRequest__Output {
  'csr': (Buffer);
}
