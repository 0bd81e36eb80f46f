// Original file: protos/machine/image.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { Empty as _google_protobuf_Empty, Empty__Output as _google_protobuf_Empty__Output } from '../google/protobuf/Empty.ts';
import type { ImageServiceImportRequest as _machine_ImageServiceImportRequest, ImageServiceImportRequest__Output as _machine_ImageServiceImportRequest__Output } from '../machine/ImageServiceImportRequest.ts';
import type { ImageServiceImportResponse as _machine_ImageServiceImportResponse, ImageServiceImportResponse__Output as _machine_ImageServiceImportResponse__Output } from '../machine/ImageServiceImportResponse.ts';
import type { ImageServiceListRequest as _machine_ImageServiceListRequest, ImageServiceListRequest__Output as _machine_ImageServiceListRequest__Output } from '../machine/ImageServiceListRequest.ts';
import type { ImageServiceListResponse as _machine_ImageServiceListResponse, ImageServiceListResponse__Output as _machine_ImageServiceListResponse__Output } from '../machine/ImageServiceListResponse.ts';
import type { ImageServicePullRequest as _machine_ImageServicePullRequest, ImageServicePullRequest__Output as _machine_ImageServicePullRequest__Output } from '../machine/ImageServicePullRequest.ts';
import type { ImageServicePullResponse as _machine_ImageServicePullResponse, ImageServicePullResponse__Output as _machine_ImageServicePullResponse__Output } from '../machine/ImageServicePullResponse.ts';
import type { ImageServiceRemoveRequest as _machine_ImageServiceRemoveRequest, ImageServiceRemoveRequest__Output as _machine_ImageServiceRemoveRequest__Output } from '../machine/ImageServiceRemoveRequest.ts';
import type { ImageServiceVerifyRequest as _machine_ImageServiceVerifyRequest, ImageServiceVerifyRequest__Output as _machine_ImageServiceVerifyRequest__Output } from '../machine/ImageServiceVerifyRequest.ts';
import type { ImageServiceVerifyResponse as _machine_ImageServiceVerifyResponse, ImageServiceVerifyResponse__Output as _machine_ImageServiceVerifyResponse__Output } from '../machine/ImageServiceVerifyResponse.ts';

export interface ImageServiceDefinition {
  Import: MethodDefinition<_machine_ImageServiceImportRequest, _machine_ImageServiceImportResponse, _machine_ImageServiceImportRequest__Output, _machine_ImageServiceImportResponse__Output>
  List: MethodDefinition<_machine_ImageServiceListRequest, _machine_ImageServiceListResponse, _machine_ImageServiceListRequest__Output, _machine_ImageServiceListResponse__Output>
  Pull: MethodDefinition<_machine_ImageServicePullRequest, _machine_ImageServicePullResponse, _machine_ImageServicePullRequest__Output, _machine_ImageServicePullResponse__Output>
  Remove: MethodDefinition<_machine_ImageServiceRemoveRequest, _google_protobuf_Empty, _machine_ImageServiceRemoveRequest__Output, _google_protobuf_Empty__Output>
  Verify: MethodDefinition<_machine_ImageServiceVerifyRequest, _machine_ImageServiceVerifyResponse, _machine_ImageServiceVerifyRequest__Output, _machine_ImageServiceVerifyResponse__Output>
}
