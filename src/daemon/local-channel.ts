// Channel options for gRPC clients of the node's own unix sockets. grpc-js's defaults are made
// for remote peers: after a failed connection it waits 1 s, then up to 120 s with jitter, before
// it tries again, so a client made while a daemon was still starting (or restarting) would go on
// failing for seconds after the socket is there. A local socket either answers or is absent;
// retrying it soon costs nothing. No channelz: nothing reads it.
export const LOCAL_CHANNEL_OPTIONS = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.enable_channelz': 0,
} as const;
