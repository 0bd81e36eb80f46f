// Logging. Daemons write lines to stderr (machined captures them per service). machined, as
// PID 1, writes to /dev/kmsg, which the kernel also prints on the console, and keeps its own
// ring buffer so `logs machined` works.
import fs from 'node:fs';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

/** Discards every line (tests, and callers that want no log). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** Keeps every line in memory as `<level>: <message>` (tests read them back). */
export class ListLogger implements Logger {
  readonly lines: string[] = [];
  info(m: string): void {
    this.lines.push(`info: ${m}`);
  }
  warn(m: string): void {
    this.lines.push(`warn: ${m}`);
  }
  error(m: string): void {
    this.lines.push(`error: ${m}`);
  }
}

const LEVEL = { error: 3, warn: 4, info: 6 } as const;

export class StderrLogger implements Logger {
  constructor(private readonly name: string) {}
  info(msg: string): void {
    this.write('info', msg);
  }
  warn(msg: string): void {
    this.write('warn', msg);
  }
  error(msg: string): void {
    this.write('error', msg);
  }
  private write(level: keyof typeof LEVEL, msg: string): void {
    process.stderr.write(`${new Date().toISOString()} ${this.name} ${level}: ${msg}\n`);
  }
}

/** Logs to /dev/kmsg on a node (useKmsg), else, or when kmsg cannot be opened, to stderr. */
export class KmsgLogger implements Logger {
  private fd: number | undefined;
  private readonly ring: string[] = [];
  private readonly listeners = new Set<(line: string) => void>();

  constructor(
    private readonly name: string,
    private readonly useKmsg: boolean,
    private readonly ringSize = 2000,
  ) {
    this.reopen();
  }

  /** /dev may not be usable at the very start; machined calls this again after mounting. */
  reopen(): void {
    if (this.fd !== undefined || !this.useKmsg) return;
    try {
      this.fd = fs.openSync('/dev/kmsg', 'w');
    } catch {
      this.fd = undefined;
    }
  }

  info(msg: string): void {
    this.write('info', msg);
  }
  warn(msg: string): void {
    this.write('warn', msg);
  }
  error(msg: string): void {
    this.write('error', msg);
  }

  lines(): string[] {
    return [...this.ring];
  }

  follow(onLine: (line: string) => void): () => void {
    this.listeners.add(onLine);
    return () => this.listeners.delete(onLine);
  }

  private write(level: keyof typeof LEVEL, msg: string): void {
    const line = `${new Date().toISOString()} ${level}: ${msg}`;
    this.ring.push(line);
    if (this.ring.length > this.ringSize) this.ring.shift();
    for (const l of this.listeners) l(line);
    for (const part of msg.split('\n')) {
      if (this.fd !== undefined) {
        try {
          fs.writeSync(this.fd, `<${LEVEL[level]}>${this.name}[${process.pid}]: ${part}\n`);
          continue;
        } catch {
          /* fall through to stderr */
        }
      }
      process.stderr.write(`${this.name}[${process.pid}] ${level}: ${part}\n`);
    }
  }
}
