// The MachineStatus resource (runtime, id 'machine'): the machine's stage and whether it is
// ready, with every condition that keeps it from being so. Several parts of machined report
// conditions under their own name (config: no or an invalid configuration, and on a configured
// node left without its configuration what its API serves and what to do; volumes: STATE or
// EPHEMERAL cannot be mounted; install: the last install failed; memory: less than Bronze
// needs); each report replaces that name's conditions, and the resource is written again.
import { StatePublisher } from '../daemon/publisher.ts';
import type { Logger } from '../lib/log.ts';
import { machineStatusDefinition } from '../contract/resources/machine-status.ts';
import type { State } from '../state/state.ts';

export const MACHINE_STATUS_ID = 'machine';

/** Talos's machine stages (the ones Bronze reports). */
export type MachineStage = 'booting' | 'installing' | 'maintenance' | 'running' | 'rebooting' | 'shutting down' | 'resetting' | 'upgrading';

export interface UnmetCondition {
  name: string;
  reason: string;
}

/** The spec as Talos has it: { stage, status: { ready, unmetConditions } }. */
export interface MachineStatusSpec {
  stage: MachineStage;
  status: { ready: boolean; unmetConditions: UnmetCondition[] };
}

export class MachineStatusReporter {
  #stage: MachineStage = 'booting';
  readonly #conditions = new Map<string, string[]>();
  readonly #publisher: StatePublisher;
  #writing: Promise<void> = Promise.resolve();

  constructor(
    state: State,
    private readonly log?: Logger,
    owner = 'machined',
  ) {
    this.#publisher = new StatePublisher(state, owner);
  }

  get stage(): MachineStage {
    return this.#stage;
  }

  /** The conditions now unmet, in the order their names were first reported. */
  get unmet(): UnmetCondition[] {
    return [...this.#conditions].flatMap(([name, reasons]) => reasons.map((reason) => ({ name, reason })));
  }

  spec(): MachineStatusSpec {
    const unmetConditions = this.unmet;
    return { stage: this.#stage, status: { ready: unmetConditions.length === 0, unmetConditions } };
  }

  /** Sets the stage and writes the resource. */
  setStage(stage: MachineStage): Promise<void> {
    this.#stage = stage;
    return this.#write();
  }

  /** Replaces the conditions reported under `name` (none: that part is fine) and writes the resource. */
  report(name: string, reasons: readonly string[]): Promise<void> {
    if (reasons.length === 0) this.#conditions.delete(name);
    else this.#conditions.set(name, [...reasons]);
    return this.#write();
  }

  /** Writes are serialized, so that the last report is the one that stays. */
  #write(): Promise<void> {
    const spec = this.spec();
    this.#writing = this.#writing
      .then(() => this.#publisher.apply(machineStatusDefinition.defaultNamespace, machineStatusDefinition.type, MACHINE_STATUS_ID, JSON.parse(JSON.stringify(spec))))
      .catch((err: unknown) => this.log?.warn(`machine status: ${(err as Error).message}`));
    return this.#writing;
  }
}
