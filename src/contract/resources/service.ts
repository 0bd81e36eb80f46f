// Services.v1alpha1.talos.dev: one per supervised service, id the service's name. machined's
// ServiceController writes them (src/machined/controllers/services.ts). Talos:
// pkg/machinery/resources/v1alpha1/service.go.
import type { ResourceDefinition } from './definition.ts';

export interface ServiceSpec {
  running: boolean;
  healthy: boolean;
  /** Health not known yet. */
  unknown: boolean;
}

export const SERVICE_TYPE = 'Services.v1alpha1.talos.dev';

export const serviceDefinition: ResourceDefinition<ServiceSpec> = {
  type: SERVICE_TYPE,
  displayType: 'Service',
  aliases: ['svc'],
  defaultNamespace: 'runtime',
  owner: 'machined',
  printColumns: [
    { name: 'Running', jsonPath: '{.running}' },
    { name: 'Healthy', jsonPath: '{.healthy}' },
    { name: 'Health Unknown', jsonPath: '{.unknown}' },
  ],
  proto: {
    message: 'talos.resource.definitions.v1alpha1.ServiceSpec',
  },
};
