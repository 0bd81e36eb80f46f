// Linux's capability names (linux/capability.h, kernel 6.12), in number order: a name's index is
// its capability number. The one list the container spec (src/containerd/spec.ts), the
// configuration's check of ContainerConfig (src/config/kinds-containers.ts, without the CAP_
// prefix) and the daemons' ambient capabilities (lib/capabilities.ts) take their names from.
// Data only, no imports: the configuration validator reads it without loading anything native.

/** Every capability the node's kernel knows, CAP_CHOWN (0) to CAP_CHECKPOINT_RESTORE (40). */
export const CAPABILITY_NAMES: readonly string[] = Object.freeze([
  'CAP_CHOWN', 'CAP_DAC_OVERRIDE', 'CAP_DAC_READ_SEARCH', 'CAP_FOWNER', 'CAP_FSETID', 'CAP_KILL',
  'CAP_SETGID', 'CAP_SETUID', 'CAP_SETPCAP', 'CAP_LINUX_IMMUTABLE', 'CAP_NET_BIND_SERVICE',
  'CAP_NET_BROADCAST', 'CAP_NET_ADMIN', 'CAP_NET_RAW', 'CAP_IPC_LOCK', 'CAP_IPC_OWNER',
  'CAP_SYS_MODULE', 'CAP_SYS_RAWIO', 'CAP_SYS_CHROOT', 'CAP_SYS_PTRACE', 'CAP_SYS_PACCT',
  'CAP_SYS_ADMIN', 'CAP_SYS_BOOT', 'CAP_SYS_NICE', 'CAP_SYS_RESOURCE', 'CAP_SYS_TIME',
  'CAP_SYS_TTY_CONFIG', 'CAP_MKNOD', 'CAP_LEASE', 'CAP_AUDIT_WRITE', 'CAP_AUDIT_CONTROL',
  'CAP_SETFCAP', 'CAP_MAC_OVERRIDE', 'CAP_MAC_ADMIN', 'CAP_SYSLOG', 'CAP_WAKE_ALARM',
  'CAP_BLOCK_SUSPEND', 'CAP_AUDIT_READ', 'CAP_PERFMON', 'CAP_BPF', 'CAP_CHECKPOINT_RESTORE',
]);

/**
 * Capabilities no container gets, privileged or not: Talos keeps them out of every process's
 * bounding set (loading kernel modules, rebooting the node), so "all grantable" excludes them.
 */
export const NEVER_GRANTED: readonly string[] = Object.freeze(['CAP_SYS_MODULE', 'CAP_SYS_BOOT']);
