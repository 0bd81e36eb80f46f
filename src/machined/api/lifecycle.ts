// Install, upgrade, reset and rollback: the API side. The work itself (fetching, verifying and
// writing images, wiping partitions) belongs to a Lifecycle that machined passes in; these
// handlers check the requests, turn the Lifecycle's progress into Progress messages, and order
// the reply against the reboot:
//
// - UpgradeStream (bidi), Install and Repair (server streams) report progress while the Lifecycle
//   works, send a last Progress{stage: "reboot"}, end the stream, and only then (afterReplyMs
//   later) ask for the reboot. An error ends the stream with its status and nothing reboots.
// - Upgrade (unary, Talos's) takes a URL only, and replies once the image is verified and
//   written; then the reboot.
// - Reset and Rollback check what they can (the labels; the Lifecycle's checkReset and
//   checkRollback: nothing to roll back to, another operation running), reply with the actor id the sequence's events will
//   carry, then hand over to the Lifecycle (as Reboot does in power.ts), so that the reply
//   reaches the client before apid is stopped. What fails after the reply is reported to
//   onError (machined's log).
//
// Once a Lifecycle has written a new image, the reboot follows even if the client has gone
// away meanwhile: the new slot is armed, and leaving it for some later reboot would surprise.

import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { ApiError, MessageReader, Stream, invalidArgument, serverStream, unary, unavailable } from './common.ts';

export interface ProgressEvent {
  stage: string;
  message: string;
  done?: number;
  total?: number;
}

export interface UpgradeOptions {
  image: string;
  preserve: boolean;
  stage: boolean;
  force: boolean;
}

export interface InstallOptions {
  disk: string;
  wipe: boolean;
  image: string;
  extraKernelArgs: string[];
}

export interface ResetOptions {
  graceful: boolean;
  reboot: boolean;
  /** Upper case, each at most once; empty: STATE and EPHEMERAL. */
  labels: string[];
}

export interface RepairOptions {
  /** Upper case: STATE, EPHEMERAL. */
  labels: string[];
  /** xfs_repair -L: zero a log that only a mount could replay (its changes are lost). */
  zeroLog: boolean;
}

/** What an upgrade leaves to do: `staged` (--stage) means no reboot now. */
export interface UpgradeOutcome {
  staged: boolean;
}

export interface Lifecycle {
  /**
   * Fetches (image is a URL) or reads `upload` (image empty; `size` bytes), verifies, writes
   * the inactive slot; resolves when the node is ready to reboot. Must not reboot by itself.
   * Throw an ApiError to choose the status.
   */
  upgrade(o: UpgradeOptions, upload: AsyncIterable<Buffer> | undefined, size: number, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<UpgradeOutcome | void>;
  /** Installs to o.disk; resolves when the node is ready to reboot into it. Must not reboot by itself. */
  install(o: InstallOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void>;
  /** Repairs system volumes that did not mount (xfs_repair); resolves when the node is ready to reboot and mount them. Must not reboot by itself. */
  repair?(o: RepairOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void>;
  /** After a successful upgrade/install/repair: the reboot (stops services in order). */
  reboot(reason: string, actorId: string): Promise<void> | void;
  /** Called after the reply, with labels already checked (only WIPEABLE ones). */
  reset(o: ResetOptions, actorId: string): Promise<void>;
  /** Called after the reply. */
  rollback(actorId: string): Promise<void>;
  /** Called before the reply, so that what is known to fail (nothing to roll back to, another operation running) reaches the caller. */
  checkRollback?(): Promise<void>;
  checkReset?(o: ResetOptions): Promise<void>;
}

/** The system partitions a reset may wipe. */
export const WIPEABLE_LABELS: readonly string[] = ['STATE', 'EPHEMERAL'];

export interface LifecycleApiOptions {
  /** Absent: a node that cannot install, upgrade, reset or roll back (the RPCs answer UNAVAILABLE). */
  lifecycle?: Lifecycle;
  /** Delay between the reply (or the end of the stream) and the reboot or reset, ms. Default 100. */
  afterReplyMs?: number;
  /** Where failures after the reply are reported. */
  onError?: (err: unknown) => void;
}

/** machine.UpgradeRequest as grpc-js decodes it. */
interface UpgradeRequest {
  image?: string;
  preserve?: boolean;
  stage?: boolean;
  force?: boolean;
  reboot_mode?: string | number;
}

interface UpgradeStreamRequest {
  request?: UpgradeRequest | null;
  size?: string | number;
  chunk?: Buffer;
}

interface InstallRequest {
  disk?: string;
  wipe?: boolean;
  image?: string;
  extra_kernel_args?: string[];
}

interface RepairRequest {
  labels?: string[];
  zero_log?: boolean;
}

interface ResetRequest {
  graceful?: boolean;
  reboot?: boolean;
  system_partitions_to_wipe?: Array<{ label?: string; wipe?: boolean }>;
  user_disks_to_wipe?: string[];
  mode?: string | number;
}

/** machine.Progress without metadata (apid stamps it). */
interface Progress {
  stage: string;
  message: string;
  done: number;
  total: number;
}

const URL_RE = /^https?:\/\//i;

function toProgress(p: ProgressEvent): Progress {
  return { stage: p.stage, message: p.message, done: Math.max(0, Math.floor(p.done ?? 0)), total: Math.max(0, Math.floor(p.total ?? 0)) };
}

function upgradeOptions(r: UpgradeRequest): UpgradeOptions {
  return { image: r.image ?? '', preserve: !!r.preserve, stage: !!r.stage, force: !!r.force };
}

function checkUrl(what: string, image: string): void {
  if (!URL_RE.test(image)) {
    throw invalidArgument(`${what} ${JSON.stringify(image)} is not an http:// or https:// URL: the node fetches the image itself (send a local file with UpgradeStream, as \`bronzectl upgrade --image <file>\` does)`);
  }
}

/** The labels a reset request asks to wipe, checked; throws INVALID_ARGUMENT naming what cannot be wiped. */
export function resetOptions(req: ResetRequest): ResetOptions {
  if (req.user_disks_to_wipe?.length) {
    throw invalidArgument(`cannot wipe user disks (${req.user_disks_to_wipe.join(', ')}): Bronze resets only its system disk (${WIPEABLE_LABELS.join(', ')})`);
  }
  if (req.mode === 'USER_DISKS' || req.mode === 2) throw invalidArgument('cannot wipe user disks (mode USER_DISKS): Bronze resets only its system disk');
  const labels: string[] = [];
  for (const spec of req.system_partitions_to_wipe ?? []) {
    const label = (spec.label ?? '').trim().toUpperCase();
    if (!label) throw invalidArgument('a system partition to wipe has no label');
    if (!labels.includes(label)) labels.push(label);
  }
  const bad = labels.filter((l) => !WIPEABLE_LABELS.includes(l));
  if (bad.length) {
    throw invalidArgument(`cannot wipe ${bad.join(', ')}: only ${WIPEABLE_LABELS.join(' and ')} can be wiped`);
  }
  return { graceful: !!req.graceful, reboot: !!req.reboot, labels };
}

/**
 * The image the client sends after the first message, as the Lifecycle reads it: exactly
 * `size` bytes, in order. Reading pulls messages from the call as they are consumed, so a
 * slow writer slows the client down (HTTP/2 flow control) instead of filling memory.
 */
async function* uploadOf(messages: AsyncIterator<UpgradeStreamRequest>, size: number): AsyncGenerator<Buffer, void, undefined> {
  let received = 0;
  for (;;) {
    const next = await messages.next();
    if (next.done) break;
    const m = next.value;
    if (m.request) throw invalidArgument('the request goes in the first message only; the following ones carry the image (chunk)');
    const chunk = m.chunk;
    if (!chunk?.length) continue;
    received += chunk.length;
    if (received > size) throw invalidArgument(`the client sent more than the ${size} bytes it announced`);
    yield chunk;
  }
  if (received < size) throw invalidArgument(`the upload ended after ${received} of the ${size} bytes announced`);
}

export function lifecycleHandlers(o: LifecycleApiOptions): Record<string, grpc.UntypedHandleCall> {
  const delay = o.afterReplyMs ?? 100;
  const lifecycle = (what: 'install or upgrade' | 'reset or roll back'): Lifecycle => {
    if (!o.lifecycle) throw unavailable(`this node cannot ${what}`);
    return o.lifecycle;
  };
  const later = (fn: () => Promise<void> | void) => {
    setTimeout(() => {
      Promise.resolve()
        .then(fn)
        .catch((err: unknown) => o.onError?.(err));
    }, delay);
  };
  const rebootLater = (lc: Lifecycle, reason: string, actorId: string) => later(() => lc.reboot(reason, actorId));

  /** The end of a successful upgrade or install stream: a last message, the end, the reboot. */
  const finish = async (lc: Lifecycle, stream: Stream<Progress>, what: string, staged = false) => {
    if (staged) {
      await stream.send({ stage: 'staged', message: `${what} staged: it takes effect at the next reboot`, done: 0, total: 0 });
      stream.end();
      return;
    }
    const actorId = randomUUID();
    await stream.send({ stage: 'reboot', message: `${what} done: rebooting (actor id ${actorId})`, done: 0, total: 0 });
    stream.end();
    rebootLater(lc, `API ${what[0]!.toUpperCase()}${what.slice(1)} request`, actorId);
  };

  const UpgradeStream: grpc.handleBidiStreamingCall<UpgradeStreamRequest, Progress> = (call) => {
    const stream = new Stream<Progress>(call as unknown as grpc.ServerWritableStream<unknown, Progress>);
    // Not the call's async iterator: it destroys the call (status included) when the call ends
    // with an error while a read is pending (see MessageReader).
    const messages = new MessageReader<UpgradeStreamRequest>(call);
    const run = async () => {
      const lc = lifecycle('install or upgrade');
      const first = await messages.next();
      if (first.done || !first.value.request) throw invalidArgument('the first message must carry the upgrade request');
      const req = upgradeOptions(first.value.request);
      const size = Number(first.value.size ?? 0);
      let upload: AsyncIterable<Buffer> | undefined;
      if (req.image) {
        checkUrl('image', req.image);
        if (first.value.chunk?.length) throw invalidArgument('image is a URL: send no image bytes');
        // Nothing more should come; anything that does is an error.
        void (async () => {
          for (;;) {
            const next = await messages.next();
            if (next.done) return;
            if (next.value.chunk?.length || next.value.request) throw invalidArgument('image is a URL: send nothing after the request');
          }
        })().catch((err: unknown) => {
          if (!stream.closed && err instanceof ApiError) stream.fail(err);
        });
      } else {
        if (!Number.isSafeInteger(size) || size <= 0) throw invalidArgument('no image: give a URL in request.image, or the size of the image the following messages carry');
        if (first.value.chunk?.length) throw invalidArgument('the first message carries the request only; send the image in the following ones');
        upload = uploadOf(messages, size);
      }
      const outcome = await lc.upgrade(req, upload, upload ? size : 0, (p) => stream.push(toProgress(p)), stream.signal);
      await finish(lc, stream, 'upgrade', outcome?.staged ?? false);
    };
    run().then(
      () => stream.end(),
      (err: unknown) => stream.fail(err),
    );
  };

  const Install = serverStream<InstallRequest, Progress>(async (req, stream) => {
    const lc = lifecycle('install or upgrade');
    const disk = (req.disk ?? '').trim();
    if (!disk) throw invalidArgument('install needs the disk to install to (e.g. /dev/vda)');
    if (!disk.startsWith('/')) throw invalidArgument(`disk ${JSON.stringify(disk)}: not an absolute device path (e.g. /dev/vda)`);
    const image = req.image ?? '';
    if (image) checkUrl('image', image);
    await lc.install({ disk, wipe: !!req.wipe, image, extraKernelArgs: [...(req.extra_kernel_args ?? [])] }, (p) => stream.push(toProgress(p)), stream.signal);
    await finish(lc, stream, 'install');
  });

  const Repair = serverStream<RepairRequest, Progress>(async (req, stream) => {
    const lc = lifecycle('install or upgrade');
    if (!lc.repair) throw unavailable('this node cannot repair its volumes');
    const labels = [...new Set((req.labels ?? []).flatMap((l) => l.split(',')).map((l) => l.trim().toUpperCase()).filter(Boolean))];
    if (labels.length === 0) throw invalidArgument(`name the system volumes to repair (${WIPEABLE_LABELS.join(', ')})`);
    const bad = labels.filter((l) => !WIPEABLE_LABELS.includes(l));
    if (bad.length) throw invalidArgument(`cannot repair ${bad.join(', ')}: only ${WIPEABLE_LABELS.join(' and ')} can be repaired`);
    await lc.repair({ labels, zeroLog: !!req.zero_log }, (p) => stream.push(toProgress(p)), stream.signal);
    await finish(lc, stream, 'repair');
  });

  const Upgrade = unary<UpgradeRequest, unknown>(async (req, call) => {
    const lc = lifecycle('install or upgrade');
    const o = upgradeOptions(req);
    checkUrl('image', o.image);
    const abort = new AbortController();
    const cancel = () => abort.abort();
    call.on('cancelled', cancel);
    let outcome: UpgradeOutcome | void;
    try {
      outcome = await lc.upgrade(o, undefined, 0, () => {}, abort.signal);
    } finally {
      call.off('cancelled', cancel);
    }
    const actorId = randomUUID();
    if (outcome?.staged) return { messages: [{ ack: 'Upgrade staged: it takes effect at the next reboot', actor_id: actorId }] };
    rebootLater(lc, 'API Upgrade request', actorId);
    return { messages: [{ ack: 'Upgrade request received', actor_id: actorId }] };
  });

  const Reset = unary<ResetRequest, unknown>(async (req) => {
    const lc = lifecycle('reset or roll back');
    const opts = resetOptions(req ?? {});
    await lc.checkReset?.(opts);
    const actorId = randomUUID();
    later(() => lc.reset(opts, actorId));
    return { messages: [{ actor_id: actorId }] };
  });

  const Rollback = unary<unknown, unknown>(async () => {
    const lc = lifecycle('reset or roll back');
    await lc.checkRollback?.();
    const actorId = randomUUID();
    later(() => lc.rollback(actorId));
    return { messages: [{}] };
  });

  return { UpgradeStream, Install, Repair, Upgrade, Reset, Rollback };
}
