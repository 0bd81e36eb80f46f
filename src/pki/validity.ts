// How certificates' validity is set, shared by every way Bronze makes one (light: no library).

/** Certificates start this much before "now", so peers whose clocks lag a little still accept them. */
export const NOT_BEFORE_SKEW_MS = 5 * 60_000;
