// Original file: protos/cosi/v1alpha1/state.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { CreateRequest as _cosi_resource_CreateRequest, CreateRequest__Output as _cosi_resource_CreateRequest__Output } from '../../cosi/resource/CreateRequest.ts';
import type { CreateResponse as _cosi_resource_CreateResponse, CreateResponse__Output as _cosi_resource_CreateResponse__Output } from '../../cosi/resource/CreateResponse.ts';
import type { DestroyRequest as _cosi_resource_DestroyRequest, DestroyRequest__Output as _cosi_resource_DestroyRequest__Output } from '../../cosi/resource/DestroyRequest.ts';
import type { DestroyResponse as _cosi_resource_DestroyResponse, DestroyResponse__Output as _cosi_resource_DestroyResponse__Output } from '../../cosi/resource/DestroyResponse.ts';
import type { GetRequest as _cosi_resource_GetRequest, GetRequest__Output as _cosi_resource_GetRequest__Output } from '../../cosi/resource/GetRequest.ts';
import type { GetResponse as _cosi_resource_GetResponse, GetResponse__Output as _cosi_resource_GetResponse__Output } from '../../cosi/resource/GetResponse.ts';
import type { ListRequest as _cosi_resource_ListRequest, ListRequest__Output as _cosi_resource_ListRequest__Output } from '../../cosi/resource/ListRequest.ts';
import type { ListResponse as _cosi_resource_ListResponse, ListResponse__Output as _cosi_resource_ListResponse__Output } from '../../cosi/resource/ListResponse.ts';
import type { UpdateRequest as _cosi_resource_UpdateRequest, UpdateRequest__Output as _cosi_resource_UpdateRequest__Output } from '../../cosi/resource/UpdateRequest.ts';
import type { UpdateResponse as _cosi_resource_UpdateResponse, UpdateResponse__Output as _cosi_resource_UpdateResponse__Output } from '../../cosi/resource/UpdateResponse.ts';
import type { WatchRequest as _cosi_resource_WatchRequest, WatchRequest__Output as _cosi_resource_WatchRequest__Output } from '../../cosi/resource/WatchRequest.ts';
import type { WatchResponse as _cosi_resource_WatchResponse, WatchResponse__Output as _cosi_resource_WatchResponse__Output } from '../../cosi/resource/WatchResponse.ts';

export interface StateDefinition {
  Create: MethodDefinition<_cosi_resource_CreateRequest, _cosi_resource_CreateResponse, _cosi_resource_CreateRequest__Output, _cosi_resource_CreateResponse__Output>
  Destroy: MethodDefinition<_cosi_resource_DestroyRequest, _cosi_resource_DestroyResponse, _cosi_resource_DestroyRequest__Output, _cosi_resource_DestroyResponse__Output>
  Get: MethodDefinition<_cosi_resource_GetRequest, _cosi_resource_GetResponse, _cosi_resource_GetRequest__Output, _cosi_resource_GetResponse__Output>
  List: MethodDefinition<_cosi_resource_ListRequest, _cosi_resource_ListResponse, _cosi_resource_ListRequest__Output, _cosi_resource_ListResponse__Output>
  Update: MethodDefinition<_cosi_resource_UpdateRequest, _cosi_resource_UpdateResponse, _cosi_resource_UpdateRequest__Output, _cosi_resource_UpdateResponse__Output>
  Watch: MethodDefinition<_cosi_resource_WatchRequest, _cosi_resource_WatchResponse, _cosi_resource_WatchRequest__Output, _cosi_resource_WatchResponse__Output>
}
