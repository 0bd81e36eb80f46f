import { describe, expect, it } from 'vitest';
import { dependenciesDot, type ResourceRef } from './inspect.ts';

const edge = (controller_name: string, edge_type: string, resource_type: string, resource_namespace = 'runtime', resource_id = '') => ({ controller_name, edge_type, resource_namespace, resource_type, resource_id }) as Parameters<typeof dependenciesDot>[0][number];

const edges = [
  edge('ServiceController', 'INPUT_WEAK', 'MachineConfigs.config.talos.dev', 'config', 'v1alpha1'),
  edge('ServiceController', 'INPUT_STRONG', 'LinkStatuses.net.talos.dev', 'network'),
  edge('ServiceController', 'OUTPUT_EXCLUSIVE', 'Services.v1alpha1.talos.dev'),
  edge('Env', 'OUTPUT_SHARED', 'Services.v1alpha1.talos.dev'),
  edge('Env', 'INPUT_DESTROY_READY', 'Services.v1alpha1.talos.dev'),
  edge('networkd', 'OUTPUT_EXCLUSIVE', 'LinkStatuses.net.talos.dev', 'network'),
];

describe('dependenciesDot', () => {
  it("draws types as notes and controllers as boxes, with talosctl's edge styles", () => {
    expect(dependenciesDot(edges)).toBe(
      [
        'digraph  {',
        '\t',
        '\tn1[label="ServiceController",shape="box"];',
        '\tn2[label="Env",shape="box"];',
        '\tn3[label="networkd",shape="box"];',
        '\tn4[fillcolor="azure2",label="MachineConfigs.config.talos.dev",shape="note",style="filled"];',
        '\tn5[fillcolor="azure2",label="LinkStatuses.net.talos.dev",shape="note",style="filled"];',
        '\tn6[fillcolor="azure2",label="Services.v1alpha1.talos.dev",shape="note",style="filled"];',
        '\tn4->n1[label="v1alpha1",style="dotted"];',
        '\tn5->n1[style="solid"];',
        '\tn1->n6[style="bold"];',
        '\tn2->n6[style="solid"];',
        '\tn3->n5[style="bold"];',
        '\t',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('with resources: one cluster per type, outputs only to the resources their producer owns', () => {
    const r = (type: string, id: string, owner: string, namespace = 'runtime'): ResourceRef => ({ namespace, type, id, owner });
    const resources = new Map([
      ['MachineConfigs.config.talos.dev', [r('MachineConfigs.config.talos.dev', 'v1alpha1', 'NodeConfig', 'config')]],
      ['LinkStatuses.net.talos.dev', [r('LinkStatuses.net.talos.dev', 'eth0', 'networkd', 'network')]],
      ['Services.v1alpha1.talos.dev', [r('Services.v1alpha1.talos.dev', 'apid', 'ServiceController'), r('Services.v1alpha1.talos.dev', 'etcd', 'Env')]],
    ]);
    const dot = dependenciesDot(edges, resources);
    expect(dot).toContain('\tsubgraph cluster_s2 {\n\t\tID = "cluster_s2";\n\t\tlabel="Services.v1alpha1.talos.dev";\n');
    expect(dot).toContain('\t\tn6[fillcolor="azure2",label="runtime/Services.v1alpha1.talos.dev/apid",shape="note",style="filled"];');
    const lines = dot.split('\n').filter((l) => l.includes('->'));
    expect(lines).toEqual([
      '\tn4->n1[style="dotted"];', // the MachineConfig v1alpha1 → ServiceController
      '\tn5->n1[style="solid"];', // eth0 → ServiceController
      '\tn1->n6[style="solid"];', // ServiceController → apid (not etcd: Env owns it)
      '\tn2->n7[style="solid"];', // Env → etcd
      '\tn3->n5[style="solid"];', // networkd → eth0
    ]);
  });
});
