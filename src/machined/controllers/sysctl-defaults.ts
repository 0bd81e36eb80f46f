// The kernel parameters Bronze sets at every boot before the configuration's (machine.sysctls
// and SysctlConfig documents win on a key), as Talos's KernelParamDefaultsController does. They
// go through KernelParamController, so each is published as a KernelParamStatus.
//
// For now the BPF pair of Talos's KSPP list (pkg/kernel/kspp): the kernel has bpf() for runc's
// cgroup v2 device rules (kernel-config/kspp.yaml's waiver), so its JIT is hardened (constant
// blinding for every user, root included) and unprivileged use is off for good (1: cannot be
// turned back on at run time; the kernel's BPF_UNPRIV_DEFAULT_OFF boots it at 2, which can).
export const DEFAULT_SYSCTLS: Readonly<Record<string, string>> = {
  'net.core.bpf_jit_harden': '2',
  'kernel.unprivileged_bpf_disabled': '1',
};
