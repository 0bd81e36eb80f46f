// Which local daemon serves which API, as data: apid routes a call for this node to the unix
// socket of the daemon that owns the service.
import { socketPath } from '../contract/paths.ts';

export const LOCAL_BACKENDS: Readonly<Record<string, string>> = {
  'machine.MachineService': 'machined',
  'machine.ImageService': 'machined',
  'inspect.InspectService': 'machined',
  'cosi.resource.State': 'machined',
  'time.TimeService': 'timed',
};

export function serviceOf(methodPath: string): string {
  // "/machine.MachineService/Version" → "machine.MachineService"
  return methodPath.split('/')[1] ?? '';
}

export function localSocketFor(methodPath: string): string | undefined {
  const daemon = LOCAL_BACKENDS[serviceOf(methodPath)];
  return daemon ? socketPath(daemon) : undefined;
}
