// The clock timed keeps, behind one small interface: RealClock (CLOCK_REALTIME through koffi:
// clock_gettime, clock_settime to step, adjtimex's kernel PLL to slew) and SimulatedClock
// (real time plus an offset that steps and slews in memory) for tests. Tests never adjust the
// host's clock: RealClock adjusts only when constructed with `adjust: true`, which timed's
// main() does only on a Bronze node (see mayAdjustClock in main.ts).
import { koffi } from '../lib/native.ts';
import { SyscallError } from '../lib/sys.ts';

export interface Clock {
  /** CLOCK_REALTIME in Unix milliseconds, with sub-millisecond precision. */
  now(): number;
  /** False when step and slew must not be called (a read-only view of a clock). */
  readonly canAdjust: boolean;
  /** Jumps the clock by deltaMs at once. */
  step(deltaMs: number): void;
  /**
   * Starts correcting offsetMs gradually (|offsetMs| < 500) and marks the clock synchronised;
   * pollMs, the interval until the next correction, sets how fast (the PLL's time constant).
   */
  slew(offsetMs: number, pollMs: number): void;
}

export type Correction = { action: 'step' | 'slew'; offsetMs: number };

export interface DisciplineOptions {
  /** At or above this |offset| the clock is stepped; below it slewed. Default 128 ms. */
  stepThresholdMs?: number;
  /** The threshold for the first correction after start (boot): default 1 ms, i.e. always step. */
  firstStepThresholdMs?: number;
}

export const DEFAULT_STEP_THRESHOLD_MS = 128;
export const DEFAULT_FIRST_STEP_THRESHOLD_MS = 1;

/** Whether an offset is stepped or slewed (RFC 5905's STEPT is 128 ms; at boot nothing depends on time yet, so step). */
export function decideCorrection(offsetMs: number, first: boolean, o: DisciplineOptions = {}): Correction {
  const threshold = first ? (o.firstStepThresholdMs ?? DEFAULT_FIRST_STEP_THRESHOLD_MS) : (o.stepThresholdMs ?? DEFAULT_STEP_THRESHOLD_MS);
  return { action: Math.abs(offsetMs) >= threshold ? 'step' : 'slew', offsetMs };
}

// ---------------------------------------------------------------------------------------------
// SimulatedClock

export interface SimulatedClockOptions {
  /** Where the simulated time starts relative to `base` (ms). Default 0. */
  offsetMs?: number;
  /** How fast a slew is applied: 500 ppm like the kernel's adjtime; Infinity applies it at once. */
  slewPpm?: number;
  /** The underlying time source; default the real time with sub-ms precision (never changed). */
  base?: () => number;
}

export type ClockEvent = { kind: 'step'; deltaMs: number; at: number } | { kind: 'slew'; offsetMs: number; pollMs: number; at: number };

export class SimulatedClock implements Clock {
  readonly canAdjust = true;
  readonly events: ClockEvent[] = [];
  #offset: number;
  readonly #ppm: number;
  readonly #base: () => number;
  /** The slew in progress: total amount and when (base time) it started. */
  #slew = { total: 0, start: 0 };

  constructor(o: SimulatedClockOptions = {}) {
    this.#offset = o.offsetMs ?? 0;
    this.#ppm = o.slewPpm ?? 500;
    this.#base = o.base ?? (() => performance.timeOrigin + performance.now());
  }

  #applied(baseNow: number): number {
    const { total, start } = this.#slew;
    if (total === 0) return 0;
    if (!Number.isFinite(this.#ppm)) return total;
    const done = Math.max(0, baseNow - start) * (this.#ppm / 1e6);
    return Math.sign(total) * Math.min(Math.abs(total), done);
  }

  now(): number {
    const b = this.#base();
    return b + this.#offset + this.#applied(b);
  }

  /** How far this clock is from its base right now (what a perfect server would measure, negated). */
  get errorMs(): number {
    const b = this.#base();
    return this.#offset + this.#applied(b);
  }

  /** What remains of the slew in progress. */
  get pendingSlewMs(): number {
    const b = this.#base();
    return this.#slew.total - this.#applied(b);
  }

  /** Folds the slew applied so far into the offset and drops the rest (as a new adjtime call does). */
  #settle(): number {
    const b = this.#base();
    this.#offset += this.#applied(b);
    this.#slew = { total: 0, start: b };
    return b;
  }

  step(deltaMs: number): void {
    this.#settle();
    this.#offset += deltaMs;
    this.events.push({ kind: 'step', deltaMs, at: this.now() });
  }

  slew(offsetMs: number, pollMs: number): void {
    const b = this.#settle();
    this.#slew = { total: offsetMs, start: b };
    this.events.push({ kind: 'slew', offsetMs, pollMs, at: this.now() });
  }

  /** Test aid: moves the clock as an outside event would (not recorded as a correction). */
  jump(deltaMs: number): void {
    this.#settle();
    this.#offset += deltaMs;
  }
}

// ---------------------------------------------------------------------------------------------
// RealClock

const CLOCK_REALTIME = 0;

/** adjtimex(2) modes and status bits (linux/timex.h). */
export const ADJ = {
  OFFSET: 0x0001,
  FREQUENCY: 0x0002,
  MAXERROR: 0x0004,
  ESTERROR: 0x0008,
  STATUS: 0x0010,
  TIMECONST: 0x0020,
  SETOFFSET: 0x0100,
  MICRO: 0x1000,
  NANO: 0x2000,
} as const;

export const STA = {
  PLL: 0x0001,
  UNSYNC: 0x0040,
  NANO: 0x2000,
} as const;

/** adjtimex's return value when the clock is not synchronised. */
export const TIME_ERROR = 5;

export interface Timex {
  modes: number;
  offset: number;
  freq: number;
  maxerror: number;
  esterror: number;
  status: number;
  constant: number;
  precision: number;
  tolerance: number;
  time: { tv_sec: number; tv_usec: number };
  tick: number;
  ppsfreq: number;
  jitter: number;
  shift: number;
  stabil: number;
  jitcnt: number;
  calcnt: number;
  errcnt: number;
  stbcnt: number;
  tai: number;
  reserved: number[];
}

export interface KernelTimeStatus {
  /** adjtimex's return: 0 TIME_OK ... 5 TIME_ERROR (unsynchronised). */
  state: number;
  status: number;
  /** What the kernel PLL still has to slew, ms. */
  offsetMs: number;
  /** Frequency correction, ppm. */
  freqPpm: number;
  maxErrorUs: number;
  estErrorUs: number;
  constant: number;
  synced: boolean;
}

interface TimeLib {
  clock_gettime: (clk: number, ts: { tv_sec: number; tv_nsec: number }) => number;
  clock_settime: (clk: number, ts: { tv_sec: number; tv_nsec: number }) => number;
  adjtimex: (tx: Timex) => number;
  timexSize: number;
}

let timeLib: TimeLib | undefined;

function lib(): TimeLib {
  if (timeLib) return timeLib;
  const k = koffi();
  const c = k.load('libc.so.6');
  // struct timespec and struct timex as on LP64 Linux (x86_64, arm64): 208 bytes.
  k.struct('bronze_timed_timespec', { tv_sec: 'int64_t', tv_nsec: 'long' });
  const timeval = k.struct('bronze_timed_timeval', { tv_sec: 'int64_t', tv_usec: 'long' });
  const timex = k.struct('bronze_timed_timex', {
    modes: 'uint',
    offset: 'long',
    freq: 'long',
    maxerror: 'long',
    esterror: 'long',
    status: 'int',
    constant: 'long',
    precision: 'long',
    tolerance: 'long',
    time: timeval,
    tick: 'long',
    ppsfreq: 'long',
    jitter: 'long',
    shift: 'int',
    stabil: 'long',
    jitcnt: 'long',
    calcnt: 'long',
    errcnt: 'long',
    stbcnt: 'long',
    tai: 'int',
    reserved: k.array('int', 11),
  });
  const size = k.sizeof(timex);
  if (size !== 208) throw new Error(`struct timex is ${size} bytes here, expected 208 (not an LP64 Linux?)`);
  timeLib = {
    clock_gettime: c.func('int clock_gettime(int clk, _Out_ bronze_timed_timespec *ts)'),
    clock_settime: c.func('int clock_settime(int clk, const bronze_timed_timespec *ts)'),
    adjtimex: c.func('int adjtimex(_Inout_ bronze_timed_timex *tx)'),
    timexSize: size,
  };
  return timeLib;
}

function emptyTimex(): Timex {
  return {
    modes: 0,
    offset: 0,
    freq: 0,
    maxerror: 0,
    esterror: 0,
    status: 0,
    constant: 0,
    precision: 0,
    tolerance: 0,
    time: { tv_sec: 0, tv_usec: 0 },
    tick: 0,
    ppsfreq: 0,
    jitter: 0,
    shift: 0,
    stabil: 0,
    jitcnt: 0,
    calcnt: 0,
    errcnt: 0,
    stbcnt: 0,
    tai: 0,
    reserved: new Array<number>(11).fill(0),
  };
}

export class ClockNotAdjustableError extends Error {
  override name = 'ClockNotAdjustableError';
}

/** The PLL time constant for a poll interval: log2(poll in s) - 4, as ntpd uses with STA_NANO. */
export function pllTimeConstant(pollMs: number): number {
  const log2 = Math.round(Math.log2(Math.max(pollMs, 1000) / 1000));
  return Math.min(Math.max(log2 - 4, 0), 10);
}

export class RealClock implements Clock {
  readonly canAdjust: boolean;

  /** koffi must be loaded (initNative) first. `adjust: true` only on a node: it changes the host's time. */
  constructor(o: { adjust: boolean }) {
    this.canAdjust = o.adjust;
    lib();
  }

  now(): number {
    const ts = { tv_sec: 0, tv_nsec: 0 };
    if (lib().clock_gettime(CLOCK_REALTIME, ts) < 0) throw new SyscallError('clock_gettime(CLOCK_REALTIME)', koffi().errno());
    return ts.tv_sec * 1000 + ts.tv_nsec / 1e6;
  }

  /** adjtimex with no modes: reads the kernel's discipline state, changes nothing. */
  kernelStatus(): KernelTimeStatus {
    const tx = emptyTimex();
    const state = lib().adjtimex(tx);
    if (state < 0) throw new SyscallError('adjtimex(read)', koffi().errno());
    const nano = (tx.status & STA.NANO) !== 0;
    return {
      state,
      status: tx.status,
      offsetMs: nano ? tx.offset / 1e6 : tx.offset / 1e3,
      freqPpm: tx.freq / 65536,
      maxErrorUs: tx.maxerror,
      estErrorUs: tx.esterror,
      constant: tx.constant,
      synced: state !== TIME_ERROR && (tx.status & STA.UNSYNC) === 0,
    };
  }

  #guard(what: string): void {
    if (!this.canAdjust) throw new ClockNotAdjustableError(`${what}: this clock is read-only (timed adjusts the clock only on a node)`);
  }

  step(deltaMs: number): void {
    this.#guard('step');
    const l = lib();
    const target = this.now() + deltaMs;
    const sec = Math.floor(target / 1000);
    const ts = { tv_sec: sec, tv_nsec: Math.min(999_999_999, Math.round((target - sec * 1000) * 1e6)) };
    if (l.clock_settime(CLOCK_REALTIME, ts) < 0) throw new SyscallError('clock_settime(CLOCK_REALTIME)', koffi().errno());
    // clock_settime leaves the kernel unsynchronised with a stale PLL offset: clear both.
    this.#adjtimex(0, 0, 'adjtimex(after step)');
  }

  slew(offsetMs: number, pollMs: number): void {
    this.#guard('slew');
    this.#adjtimex(offsetMs, pllTimeConstant(pollMs), 'adjtimex(slew)');
  }

  /** ADJ_OFFSET (ns, the kernel clamps to ±500 ms) with the PLL on and STA_UNSYNC cleared. */
  #adjtimex(offsetMs: number, constant: number, call: string): void {
    const tx = emptyTimex();
    tx.modes = ADJ.OFFSET | ADJ.STATUS | ADJ.NANO | ADJ.TIMECONST | ADJ.MAXERROR | ADJ.ESTERROR;
    tx.offset = Math.round(Math.min(Math.max(offsetMs, -500), 500) * 1e6);
    tx.status = STA.PLL;
    tx.constant = constant;
    tx.maxerror = Math.round(Math.abs(offsetMs) * 1000);
    tx.esterror = 0;
    if (lib().adjtimex(tx) < 0) throw new SyscallError(call, koffi().errno());
  }
}
