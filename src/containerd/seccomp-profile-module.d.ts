// Debian's default seccomp profile, read at build time (image-builder/seccomp-profile.ts) and
// served as this module by the bundler and by vitest.config.ts.
declare module 'bronze:seccomp-profile' {
  const profile: import('./seccomp.ts').MobySeccompProfile;
  export default profile;
}
