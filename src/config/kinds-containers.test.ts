// ContainerConfig as Talos validates it (its container_config_test.go cases, with its messages),
// Bronze's extra checks (service names, host paths, user volumes), the checks across documents
// (dependsOn.containers, cycles, probes of undeclared containers) and ContainerHealthConfig.
import { describe, expect, it } from 'vitest';
import { DAEMONS } from '../contract/paths.ts';
import { hostPathError, RESERVED_CONTAINER_NAMES } from './kinds-containers.ts';
import { formatIssues, validateConfig, type ConfigIssue } from './validate.ts';

const doc = (body: string) => `apiVersion: v1alpha1\nkind: ContainerConfig\n${body}\n`;
const pinned = `docker.io/library/nginx@sha256:${'0'.repeat(64)}`;

function result(yaml: string) {
  return validateConfig(yaml);
}
function errors(yaml: string): ConfigIssue[] {
  const r = result(yaml);
  if (r.ok) throw new Error('expected the configuration to be refused');
  return r.errors;
}
const messages = (yaml: string) => errors(yaml).map((e) => `${e.path}: ${e.message}`);

describe('ContainerConfig: Talos\'s rules', () => {
  it('accepts the minimal document, with Talos\'s warning for an image that is not digest-pinned', () => {
    const r = result(doc('name: nginx\nimage: nginx'));
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
    expect(r.warnings).toEqual([expect.objectContaining({ path: 'ContainerConfig(nginx).image', kind: 'advice', message: expect.stringContaining('not digest-pinned') })]);
    const p = result(doc(`name: nginx\nimage: ${pinned}`));
    expect(p.ok && p.warnings).toEqual([]);
  });

  it('accepts Talos\'s full document but for what Bronze refuses: the user volume and the /dev host path', () => {
    const full = doc(`name: director
image: ghcr.io/siderolabs/director:v1.0.0
entrypoint: ["/director"]
args: ["--verbose"]
workingDir: /srv
runAs:
  uid: 65534
  gid: 65534
environment:
  - LOG_LEVEL=debug
mounts:
  - userVolume:
      name: director-data
      destination: /var/lib/director
      options: [rw]
  - tmpfs:
      destination: /tmp
      size: 64MiB
  - hostPath:
      source: /dev
      destination: /dev
security:
  profile: privileged
  capabilities:
    add: [NET_ADMIN]
    drop: [ALL]
network:
  mode: host
resources:
  limits:
    cpu: 1500m
    memory: 512MiB
dependsOn:
  paths:
    - /var/mnt/director-data
  networks:
    - addresses
  time: true`);
    const errs = errors(full);
    expect(errs.map((e) => [e.path, e.kind, e.line])).toEqual([
      ['ContainerConfig(director).mounts[0].userVolume', 'unsupported', 14],
      ['ContainerConfig(director).mounts[2].hostPath.source', 'invalid', 22],
    ]);
    expect(errs[0]!.message).toMatch(/^user volumes are not available yet/);
    expect(errs[1]!.message).toMatch(/is not allowed: containers may mount host paths under \/var\/ only/);
    // Without them, Talos's document is accepted as it is.
    const ok = result(full.replace(/  - userVolume:\n(.*\n){3}/, '').replace('source: /dev\n      destination: /dev', 'source: /var/director\n      destination: /dev'));
    expect(ok.ok, ok.ok ? '' : formatIssues(ok.errors)).toBe(true);
  });

  // container_config_test.go TestContainerConfigValidationErrors: each document and the message Talos gives.
  const TALOS_ERRORS: Array<[string, string, string]> = [
    ['no name', 'image: nginx', 'name is required'],
    ['uppercase name', 'name: NGINX\nimage: nginx', 'name can only contain lowercase ASCII letters, digits and hyphens'],
    ['no image', 'name: nginx', 'image is required'],
    ['unparseable image', 'name: nginx\nimage: "not a ref"', 'invalid image reference'],
    ['negative uid', 'name: nginx\nimage: nginx\nrunAs:\n  uid: -1', 'runAs.uid must be non-negative, got -1'],
    ['negative gid', 'name: nginx\nimage: nginx\nrunAs:\n  gid: -1', 'runAs.gid must be non-negative, got -1'],
    ['environment without =', 'name: nginx\nimage: nginx\nenvironment: ["BROKEN"]', 'must be in KEY=value form'],
    ['mount with no source', 'name: nginx\nimage: nginx\nmounts:\n  - {}', 'exactly one of userVolume, tmpfs or hostPath must be set'],
    ['mount with two sources', 'name: nginx\nimage: nginx\nmounts:\n  - tmpfs:\n      destination: /tmp\n    hostPath:\n      source: /dev\n      destination: /dev', 'exactly one of userVolume, tmpfs or hostPath must be set'],
    ['relative destination', 'name: nginx\nimage: nginx\nmounts:\n  - tmpfs:\n      destination: tmp', 'must be an absolute path'],
    ['duplicate destinations', 'name: nginx\nimage: nginx\nmounts:\n  - tmpfs:\n      destination: /tmp\n  - tmpfs:\n      destination: /tmp', 'duplicate destination "/tmp"'],
    ['ro and rw together', 'name: nginx\nimage: nginx\nmounts:\n  - tmpfs:\n      destination: /tmp\n      options: [ro, rw]', 'mutually exclusive'],
    ['unknown mount option', 'name: nginx\nimage: nginx\nmounts:\n  - tmpfs:\n      destination: /tmp\n      options: [sync]', 'unsupported mount option "sync"'],
    ['unknown security profile', 'name: nginx\nimage: nginx\nsecurity:\n  profile: yolo', 'unsupported security profile'],
    ['capability with CAP_ prefix', 'name: nginx\nimage: nginx\nsecurity:\n  capabilities:\n    add: [CAP_NET_ADMIN]', 'without the CAP_ prefix'],
    ['ALL in add', 'name: nginx\nimage: nginx\nsecurity:\n  capabilities:\n    add: [ALL]', 'does not accept ALL'],
    ['capability in both lists', 'name: nginx\nimage: nginx\nsecurity:\n  capabilities:\n    add: [NET_ADMIN]\n    drop: [NET_ADMIN]', 'appears in both add and drop'],
    ['unknown network mode', 'name: nginx\nimage: nginx\nnetwork:\n  mode: bridge', 'unsupported network mode'],
    ['cpu without millicores', 'name: nginx\nimage: nginx\nresources:\n  limits:\n    cpu: "2"', 'must be expressed in millicores'],
    ['zero cpu', 'name: nginx\nimage: nginx\nresources:\n  limits:\n    cpu: 0m', 'must be greater than zero'],
    ['bad memory size', 'name: nginx\nimage: nginx\nresources:\n  limits:\n    memory: lots', 'is not a valid size'],
    ['unknown network condition', 'name: nginx\nimage: nginx\ndependsOn:\n  networks: [dns]', 'unsupported dependsOn.networks condition "dns"'],
    ['relative dependsOn path', 'name: nginx\nimage: nginx\ndependsOn:\n  paths: [var/mnt/data]', 'must be an absolute path'],
    ['self dependency', 'name: nginx\nimage: nginx\ndependsOn:\n  containers: [nginx]', 'cannot depend on itself'],
  ];

  it.each(TALOS_ERRORS)('refuses as Talos does: %s', (_, body, message) => {
    const errs = errors(doc(body));
    expect(errs.some((e) => e.message.includes(message)), `want …${message}…\n${formatIssues(errs)}`).toBe(true);
  });

  it('reports the field and its line', () => {
    const errs = errors(doc(`name: web\nimage: ${pinned}\nresources:\n  limits:\n    cpu: 1.5\n    memory: 512MiB`));
    expect(errs).toEqual([expect.objectContaining({ path: 'ContainerConfig(web).resources.limits.cpu', line: 7, message: 'limits.cpu "1.5" must be expressed in millicores, e.g. 1500m' })]);
    const name = errors(doc(`name: ${'a'.repeat(64)}\nimage: ${pinned}`));
    expect(name[0]).toMatchObject({ line: 3, message: `name "${'a'.repeat(64)}" must be 63 characters or fewer` });
    expect(result(doc(`name: ${'a'.repeat(63)}\nimage: ${pinned}`)).ok).toBe(true);
    expect(messages(doc(`name: web_server\nimage: ${pinned}`))).toEqual(['ContainerConfig(web_server).name: name "web_server": name can only contain lowercase ASCII letters, digits and hyphens']);
  });

  it('checks capability names as Talos does, and that Linux has them', () => {
    const caps = (list: string) => messages(doc(`name: web\nimage: ${pinned}\nsecurity:\n  capabilities:\n    drop: [${list}]`));
    expect(caps('net_admin')).toEqual(['ContainerConfig(web).security.capabilities.drop[0]: capabilities.drop: capability "net_admin" must be upper case']);
    expect(caps('NET_ADMIN2')).toEqual(['ContainerConfig(web).security.capabilities.drop[0]: capabilities.drop: capability "NET_ADMIN2" may only contain upper case letters and underscores']);
    expect(caps('NET_ADMN')).toEqual(['ContainerConfig(web).security.capabilities.drop[0]: capabilities.drop: "NET_ADMN" is not a Linux capability']);
    expect(result(doc(`name: web\nimage: ${pinned}\nsecurity:\n  capabilities:\n    drop: [ALL]\n    add: [NET_BIND_SERVICE]`)).ok).toBe(true);
  });

  it('refuses to add a capability no container is ever granted (the start would fail)', () => {
    expect(messages(doc(`name: web\nimage: ${pinned}\nsecurity:\n  profile: privileged\n  capabilities:\n    add: [NET_ADMIN, SYS_MODULE]`))).toEqual([
      `ContainerConfig(web).security.capabilities.add[1]: capability "SYS_MODULE" is never granted to a container, privileged or not (loading kernel modules and rebooting the node are the node's alone)`,
    ]);
    expect(result(doc(`name: web\nimage: ${pinned}\nsecurity:\n  capabilities:\n    drop: [SYS_BOOT]`)).ok).toBe(true);
  });

  it('refuses an unknown field, a bad tmpfs size and a relative workingDir', () => {
    expect(messages(doc(`name: web\nimage: ${pinned}\nprivileged: true`))).toEqual(['ContainerConfig(web).privileged: unknown field "privileged": expected one of apiVersion, kind, name, image, entrypoint, args, workingDir, runAs, environment, mounts, security, network, resources, dependsOn']);
    expect(messages(doc(`name: web\nimage: ${pinned}\nmounts:\n  - tmpfs: {destination: /tmp, size: lots}`))[0]).toMatch(/tmpfs.size "lots" is not a valid size/);
    expect(messages(doc(`name: web\nimage: ${pinned}\nworkingDir: srv`))).toEqual(['ContainerConfig(web).workingDir: workingDir "srv" must be an absolute path']);
  });
});

describe('ContainerConfig: Bronze\'s own checks', () => {
  it('reserves the names of all of Bronze\'s processes', () => {
    expect(RESERVED_CONTAINER_NAMES).toEqual(expect.arrayContaining(['machined', 'init', ...DAEMONS, 'etcd', 'containerd', 'runc', 'bronzectl']));
  });

  it.each(RESERVED_CONTAINER_NAMES.map((n) => [n]))('refuses the name of Bronze\'s %s', (name) => {
    expect(messages(doc(`name: ${name}\nimage: ${pinned}`))).toEqual([expect.stringMatching(new RegExp(`^ContainerConfig\\(${name}\\)\\.name: name "${name}" is taken: it names one of Bronze's own services`))]);
  });

  it('lets host paths come from the operator\'s part of /var only', () => {
    for (const ok of ['/var/mnt/data', '/var/web', '/var/log', '/var/lib/app']) expect(hostPathError(ok), ok).toBeUndefined();
    for (const bad of ['/', '/dev', '/proc', '/sys', '/system', '/system/state', '/etc', '/var', '/var/lib', '/var/lib/containerd', '/var/lib/etcd/member', '/var/lib/bronze', '/var/../etc', '/var/mnt/', '/var//x', '/var/x\0y']) {
      expect(hostPathError(bad), bad).toBeDefined();
    }
    expect(hostPathError('/var/lib/etcd/member')).toMatch(/\/var\/lib\/etcd holds Bronze's own state/);
    expect(hostPathError('/var/lib')).toMatch(/\/var\/lib\/containerd holds Bronze's own state/);
    const errs = errors(doc(`name: web\nimage: ${pinned}\nmounts:\n  - hostPath: {source: /system/state, destination: /state}`));
    expect(errs).toEqual([expect.objectContaining({ path: 'ContainerConfig(web).mounts[0].hostPath.source', line: 6, kind: 'invalid' })]);
  });

  it('refuses a dependency on an undeclared container, and cycles, as Talos does', () => {
    const c = (name: string, ...deps: string[]) => doc(`name: ${name}\nimage: ${pinned}${deps.length ? `\ndependsOn:\n  containers: [${deps.join(', ')}]` : ''}`);
    expect(result([c('a', 'b', 'c'), c('b', 'd'), c('c', 'd'), c('d')].join('---\n')).ok).toBe(true); // a diamond is no cycle
    expect(messages(c('a', 'nonexistent'))).toEqual(['ContainerConfig(a).dependsOn.containers[0]: container "a" depends on container "nonexistent", which is not configured']);
    expect(messages([c('a', 'b'), c('b', 'c'), c('c', 'a')].join('---\n'))).toEqual(['ContainerConfig(a).dependsOn.containers[0]: container dependsOn cycle detected: a -> b -> c -> a']);
    const dup = errors([c('a'), c('a')].join('---\n'));
    expect(dup[0]!.message).toMatch(/duplicate ContainerConfig\(a\) document/);
  });
});

describe('ContainerHealthConfig', () => {
  const web = (mode = 'host') => doc(`name: web\nimage: ${pinned}\nnetwork:\n  mode: ${mode}`);
  const health = (body: string) => `---\napiVersion: v1alpha1\nkind: ContainerHealthConfig\n${body}\n`;

  it('accepts exec, HTTP and TCP probes of a declared container, with Kubernetes\'s fields', () => {
    for (const body of [
      'name: web\nexec:\n  command: [wget, -q, -O-, http://127.0.0.1/]\nperiodSeconds: 5\nfailureThreshold: 2',
      'name: web\nhttpGet:\n  port: 8080\n  path: /healthz\ninitialDelaySeconds: 10\ntimeoutSeconds: 2\nsuccessThreshold: 1',
      'name: web\ntcpSocket:\n  port: 8080\n  host: 10.0.2.15',
    ]) {
      const r = result(web() + health(body));
      expect(r.ok, r.ok ? body : formatIssues(r.errors)).toBe(true);
    }
  });

  it('refuses a probe of an undeclared container, two actions, none, and bad values', () => {
    expect(messages(health('name: db\nexec:\n  command: [true]'))).toEqual(['ContainerHealthConfig(db).name: no ContainerConfig named "db": a ContainerHealthConfig probes a declared container, by its name']);
    expect(messages(web() + health('name: web\nexec: {command: [x]}\ntcpSocket: {port: 1}'))).toEqual(['ContainerHealthConfig(web).tcpSocket: a health probe needs exactly one of exec, httpGet or tcpSocket']);
    expect(messages(web() + health('name: web'))).toEqual(['ContainerHealthConfig(web): a health probe needs exactly one of exec, httpGet or tcpSocket']);
    expect(messages(web() + health('name: web\nhttpGet: {port: 70000, path: healthz}\nperiodSeconds: 0'))).toEqual([
      'ContainerHealthConfig(web).httpGet.port: 70000 is not a valid port: expected an integer from 1 to 65535',
      'ContainerHealthConfig(web).httpGet.path: path "healthz" must start with "/"',
      'ContainerHealthConfig(web).periodSeconds: 0 is not a valid periodSeconds: expected an integer from 1 to 2147483647',
    ]);
  });

  it('refuses HTTP and TCP probes of a container without the host\'s network (they dial from the node)', () => {
    const errs = errors(web('none') + health('name: web\nhttpGet: {port: 80}'));
    expect(errs).toEqual([expect.objectContaining({ path: 'ContainerHealthConfig(web).httpGet', message: expect.stringMatching(/network.mode: none.*use exec otherwise/) })]);
    expect(result(web('none') + health('name: web\nexec: {command: [/bin/true]}')).ok).toBe(true);
  });
});
