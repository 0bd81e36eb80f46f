// The Bronze API client library: connect() and the routing metadata helpers.
export { Client, connect, type ConnectOptions } from './client.ts';
export { service, type CallOptions, type PathOf, type RpcItem, type RpcPath, type RpcReply, type RpcRequest, type Service, type Stream } from './rpc.ts';
export { StateAPI } from './state.ts';
export { DEFAULT_API_PORT, parseEndpoint, type Endpoint } from './endpoint.ts';
export { RpcError, codeName, isServiceError, toRpcError } from './errors.ts';
export { node, nodes } from './metadata.ts';
export { NodeNameError, nodeHost } from '../lib/node-name.ts';
export * from './types.ts';
