// Original file: protos/security/security.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { CertificateRequest as _securityapi_CertificateRequest, CertificateRequest__Output as _securityapi_CertificateRequest__Output } from '../securityapi/CertificateRequest.ts';
import type { CertificateResponse as _securityapi_CertificateResponse, CertificateResponse__Output as _securityapi_CertificateResponse__Output } from '../securityapi/CertificateResponse.ts';

export interface SecurityServiceDefinition {
  Certificate: MethodDefinition<_securityapi_CertificateRequest, _securityapi_CertificateResponse, _securityapi_CertificateRequest__Output, _securityapi_CertificateResponse__Output>
}
