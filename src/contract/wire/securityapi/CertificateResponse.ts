// Original file: protos/security/security.proto


export interface CertificateResponse {
  'ca'?: (Buffer | Uint8Array | string);
  'crt'?: (Buffer | Uint8Array | string);
}

export interface CertificateResponse__Output {
  'ca': (Buffer);
  'crt': (Buffer);
}
