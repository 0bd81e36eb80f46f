import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { compileContainerdProtos } from './containerd-protos.ts';

describe("containerd's API protos, compiled at build time", () => {
  const root = protobuf.Root.fromJSON(compileContainerdProtos());

  it('has every service Bronze calls, with its methods resolved', () => {
    const services = ['containers', 'content', 'diff', 'events', 'images', 'leases', 'namespaces', 'snapshots', 'tasks', 'version'];
    for (const s of services) {
      const svc = root.lookup(`containerd.services.${s}.v1`) as protobuf.Namespace;
      const service = svc.nestedArray.find((n): n is protobuf.Service => n instanceof protobuf.Service)!;
      expect(service, s).toBeDefined();
      for (const m of service.methodsArray) expect((m.resolve(), m.resolvedRequestType), `${s}/${m.name}`).toBeTruthy();
    }
    expect(root.lookupService('containerd.services.content.v1.Content').methods.Write!.requestStream).toBe(true);
  });

  it('keeps the protos’ field names and carries the metrics and runc options messages', () => {
    expect(root.lookupType('containerd.services.tasks.v1.CreateTaskRequest').fields.container_id).toBeDefined();
    expect(root.lookupType('io.containerd.cgroups.v2.Metrics').fields.memory).toBeDefined();
    expect(root.lookupType('io.containerd.cgroups.v1.Metrics').fields.memory).toBeDefined();
    expect(root.lookupType('containerd.runc.v1.Options').fields.systemd_cgroup).toBeDefined();
  });

  it('is served as bronze:containerd-protos', async () => {
    const { descriptor } = await import('bronze:containerd-protos');
    expect(JSON.parse(descriptor)).toEqual(JSON.parse(JSON.stringify(compileContainerdProtos())));
  });
});
