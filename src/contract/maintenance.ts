// What a node in maintenance mode shows a client: its throwaway self-signed CA's common name.
// machined makes that CA (src/machined/node-config.ts); bronzectl recognises it when its mTLS
// handshake fails, to say "the node is in maintenance mode: use --insecure".
export const MAINTENANCE_CA_COMMON_NAME = 'bronze maintenance';
