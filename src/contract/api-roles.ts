// The roles of Bronze's API (Talos's: pkg/machinery/role), carried as the client certificate's
// Organizations; the RBAC table (rbac.ts) says what each may call. Not to be confused with the
// process roles of the one binary (src/roles.ts: machined, apid, ...).
export const API_ROLES = ['os:admin', 'os:operator', 'os:reader', 'os:etcd:backup'] as const;
export type ApiRole = (typeof API_ROLES)[number];
