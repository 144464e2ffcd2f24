import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiConfig, GatewayConfig, KNOWN_PLACEHOLDER_SECRETS } from '@app/config';
import { execFileRegistered } from './support/process-registry';
import { startSimGateway } from './support/processes';
import { REPO_ROOT } from './support/run-context';

// js-yaml comes with the test tooling; only its loader is needed
// eslint-disable-next-line @typescript-eslint/no-require-imports -- js-yaml ships no types here; require keeps it one line
const { loadAll } = require('js-yaml') as { loadAll(text: string): unknown[] };

interface Manifest {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- every kind's spec, read path by path
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

function render(dir = 'base'): Manifest[] | null {
  try {
    return loadAll(execFileSync('kubectl', ['kustomize', join(REPO_ROOT, 'k8s', ...dir.split('/'))], { encoding: 'utf8' })) as Manifest[];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

const rendered = render();
// CI installs kubectl (.ci/run); a machine without it skips these checks, saying so
if (!rendered) process.stderr.write('k8s manifests: kubectl is not installed, `kubectl kustomize k8s/base` checks skipped\n');
const maybe = rendered ? describe : describe.skip;

/** What the cluster gets for the gateways: drain within the grace period, one voluntary disruption at a time, autoscaling. */
maybe('k8s manifests (kubectl kustomize k8s/base)', () => {
  const all = rendered ?? [];
  const one = (kind: string, name: string) => {
    const found = all.filter((m) => m.kind === kind && m.metadata.name === name);
    expect(found).toHaveLength(1);
    return found[0];
  };
  const gateway = () => one('StatefulSet', 'gateway');
  const config = () => one('ConfigMap', 'gateway-config').data ?? {};

  it('the gateway pod waits out its drain: terminationGracePeriodSeconds = GATEWAY_DRAIN_GRACE_MS, preStop asks for the drain', () => {
    const pod = gateway().spec.template.spec;
    expect(pod.terminationGracePeriodSeconds * 1000).toBe(Number(config().GATEWAY_DRAIN_GRACE_MS));
    // and the gateway's own default, so a pod run without the ConfigMap drains within the same bound
    const byDefault: unknown = Reflect.get(new GatewayConfig(), 'GATEWAY_DRAIN_GRACE_MS');
    if (byDefault !== undefined) expect(byDefault).toBe(Number(config().GATEWAY_DRAIN_GRACE_MS));
    const container = pod.containers.find((c: { name: string }) => c.name === 'gateway');
    // a shell reads the id: Kubernetes leaves `$(GATEWAY_ID)` unexpanded in lifecycle hooks (the next test runs it)
    expect(container.lifecycle.preStop.exec.command.slice(0, 2)).toEqual(['sh', '-c']);
    expect(container.lifecycle.preStop.exec.command.join(' ')).not.toContain('$(');
    expect(container.env.find((e: { name: string }) => e.name === 'GATEWAY_ID').valueFrom.fieldRef.fieldPath).toBe('metadata.name');
  });

  describe('the rendered preStop, run as the kubelet runs it (argv as is, the pod\'s env)', () => {
    let fleet: Awaited<ReturnType<typeof startSimGateway>> | undefined;
    afterAll(async () => {
      await fleet?.gateway.stop();
      await fleet?.sim.stop();
    });

    it('drains the gateway named by the pod\'s GATEWAY_ID: the gateway hands on and exits 0', async () => {
      const gatewayId = `k8s-prestop-${Date.now().toString(36)}`;
      fleet = await startSimGateway(gatewayId);
      const container = gateway().spec.template.spec.containers.find((c: { name: string }) => c.name === 'gateway');
      const [file, ...args] = container.lifecycle.preStop.exec.command as string[];
      // the image's WORKDIR is the repository root's layout (/app holds dist/); the env is what the pod has
      const gatewayExit = new Promise((resolve) => fleet!.gateway.child.once('exit', resolve));
      const { stdout } = await execFileRegistered(file, args, { cwd: REPO_ROOT, env: { ...process.env, GATEWAY_ID: gatewayId } });
      expect(JSON.parse(stdout)).toEqual({ gatewayId, drainRequested: true });
      expect(await gatewayExit).toBe(0);
    });
  });

  it('readiness is the ops server’s /readyz on the port the Service and the scrape annotation name', () => {
    const sts = gateway();
    const container = sts.spec.template.spec.containers[0];
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'ops' });
    const opsPort = container.ports.find((p: { name: string }) => p.name === 'ops').containerPort;
    expect(String(opsPort)).toBe(sts.spec.template.metadata.annotations['prometheus.io/port']);
    const svc = one('Service', 'gateway');
    expect(svc.spec.ports).toEqual([expect.objectContaining({ targetPort: 'ops', port: opsPort })]);
    expect(container.resources.requests.memory).toBeDefined();
  });

  it('the PodDisruptionBudget and the HPA select the gateway pods and target the StatefulSet', () => {
    const labels = gateway().spec.template.metadata.labels;
    const selector = gateway().spec.selector.matchLabels;
    for (const [k, v] of Object.entries(selector)) expect(labels[k]).toBe(v);
    const pdb = one('PodDisruptionBudget', 'gateway');
    expect(pdb.spec.selector.matchLabels).toEqual(selector);
    expect(pdb.spec.maxUnavailable).toBe(1);
    const svc = one('Service', 'gateway');
    expect(svc.spec.selector).toEqual(selector);
    const hpa = one('HorizontalPodAutoscaler', 'gateway');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'gateway' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
  });
});

interface Container {
  name: string;
  ports?: Array<{ name: string; containerPort: number }>;
  envFrom?: Array<{ secretRef?: { name: string } }>;
  securityContext?: Record<string, unknown>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  startupProbe?: { httpGet: { path: string; port: string } };
}

/** Issue 13 item 8: a base fit to apply, secrets from an overlay. */
maybe('k8s base fit to apply (kubectl kustomize k8s/base, k8s/overlays/example)', () => {
  const base = rendered ?? [];
  const overlay = render('overlays/example') ?? [];
  const workloads = (all: Manifest[]) => all.filter((m) => ['Deployment', 'StatefulSet', 'Job'].includes(m.kind));
  const longRunning = () => workloads(base).filter((m) => m.kind !== 'Job');
  const containers = (m: Manifest): Container[] => m.spec.template.spec.containers;
  const REQUIRED_SECRETS = ['DATABASE_URL', 'REDIS_URL', 'JWT_SECRET', 'SECRET_ENCRYPTION_KEY'];

  it('the base carries no Secret; the example overlay supplies the one every workload reads, with values production refuses', () => {
    expect(base.filter((m) => m.kind === 'Secret')).toEqual([]);
    expect(workloads(base).map((m) => m.metadata.name).sort()).toEqual(['api', 'gateway', 'gateway-migrate', 'webhook-dispatcher']);
    const secretNames = new Set(workloads(base).flatMap((m) => containers(m).flatMap((c) => (c.envFrom ?? []).flatMap((e) => (e.secretRef ? [e.secretRef.name] : [])))));
    expect([...secretNames]).toEqual(['gateway-secrets']);
    const secrets = overlay.filter((m) => m.kind === 'Secret');
    expect(secrets.map((m) => m.metadata.name)).toEqual(['gateway-secrets']);
    expect(Object.keys(secrets[0].stringData ?? {}).sort()).toEqual([...REQUIRED_SECRETS].sort());
    // a copied example never signs real tokens or encrypts real sessions
    expect(KNOWN_PLACEHOLDER_SECRETS).toContain(secrets[0].stringData!.JWT_SECRET);
    expect(KNOWN_PLACEHOLDER_SECRETS).toContain(secrets[0].stringData!.SECRET_ENCRYPTION_KEY);
    expect(workloads(overlay).map((m) => m.metadata.name).sort()).toEqual(workloads(base).map((m) => m.metadata.name).sort());
  });

  it('every pod runs as the image\'s non-root uid with a read-only root filesystem and a writable /tmp, within resource limits', () => {
    const uid = Number(/useradd[^\n]*--uid (\d+)/.exec(readFileSync(join(REPO_ROOT, 'docker', 'Dockerfile'), 'utf8'))?.[1]);
    expect(uid).toBeGreaterThan(0);
    for (const workload of workloads(base)) {
      const pod = workload.spec.template.spec;
      expect({ name: workload.metadata.name, pod: pod.securityContext }).toMatchObject({ pod: { runAsNonRoot: true, runAsUser: uid } });
      const tmpVolumes = (pod.volumes ?? []).filter((v: { emptyDir?: object }) => v.emptyDir).map((v: { name: string }) => v.name);
      for (const c of containers(workload)) {
        expect({ name: c.name, sc: c.securityContext }).toMatchObject({ sc: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } });
        const tmp = (c.volumeMounts ?? []).find((m) => m.mountPath === '/tmp');
        expect(tmpVolumes).toContain(tmp?.name);
        expect({ name: c.name, requests: Object.keys(c.resources?.requests ?? {}).sort(), limits: Object.keys(c.resources?.limits ?? {}) }).toMatchObject({
          requests: ['cpu', 'memory'],
          limits: expect.arrayContaining(['memory']),
        });
      }
    }
  });

  it('long-running pods have a startupProbe on a named port and Prometheus scrape annotations naming their ops port', () => {
    for (const workload of longRunning()) {
      const [c] = containers(workload);
      const ports = new Map((c.ports ?? []).map((p) => [p.name, p.containerPort]));
      expect({ name: workload.metadata.name, startup: c.startupProbe?.httpGet.path }).toEqual({ name: workload.metadata.name, startup: '/healthz' });
      expect(ports.has(c.startupProbe!.httpGet.port)).toBe(true);
      const annotations = workload.spec.template.metadata.annotations ?? {};
      expect(annotations['prometheus.io/scrape']).toBe('true');
      expect(annotations['prometheus.io/path']).toBe('/metrics');
      // metrics live on the ops port of every app, never on the API's public one
      expect(annotations['prometheus.io/port']).toBe(String(ports.get('ops')));
    }
  });

  it('the API container\'s ops port is the API\'s own API_OPS_PORT default', () => {
    const api = workloads(base).find((m) => m.metadata.name === 'api')!;
    const ops = containers(api)[0].ports!.find((p) => p.name === 'ops')!;
    expect(ops.containerPort).toBe(new ApiConfig().API_OPS_PORT);
  });

  it('every long-running pod binds its ops port on the pod\'s address (OPS_HOST, loopback by default), where the kubelet probes', () => {
    const config = base.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'gateway-config')!;
    expect(config.data?.OPS_HOST).toBe('0.0.0.0');
    expect(new ApiConfig().OPS_HOST).toBe('127.0.0.1');
    for (const workload of longRunning()) {
      const refs = (containers(workload)[0] as { envFrom?: Array<{ configMapRef?: { name: string } }> }).envFrom ?? [];
      expect({ name: workload.metadata.name, config: refs.some((r) => r.configMapRef?.name === 'gateway-config') }).toEqual({ name: workload.metadata.name, config: true });
    }
  });

  it('the migrate Job can be applied again: it removes itself once finished', () => {
    const job = workloads(base).find((m) => m.kind === 'Job')!;
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
    expect(job.spec.ttlSecondsAfterFinished).toBeLessThanOrEqual(600);
    expect(job.metadata).not.toHaveProperty('generateName');
  });

  it('NetworkPolicies admit the API\'s HTTP port from anywhere and every ops port (metrics) from inside the cluster only', () => {
    const policies = base.filter((m) => m.kind === 'NetworkPolicy');
    const selects = (policy: Manifest, labels: Record<string, string>) => {
      const sel = policy.spec.podSelector;
      const byLabels = Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
      const byExpressions = (sel.matchExpressions ?? []).every((e: { key: string; operator: string; values: string[] }) => e.operator === 'In' && e.values.includes(labels[e.key]));
      return byLabels && byExpressions;
    };
    for (const workload of longRunning()) {
      const labels = workload.spec.template.metadata.labels;
      const mine = policies.filter((p) => selects(p, labels));
      expect({ name: workload.metadata.name, policies: mine.length }).toEqual({ name: workload.metadata.name, policies: 1 });
      const rules: Array<{ from?: unknown[]; ports: Array<{ port: string }> }> = mine[0].spec.ingress;
      const open = rules.filter((r) => !r.from).flatMap((r) => r.ports.map((p) => p.port));
      const inCluster = rules.filter((r) => r.from).flatMap((r) => r.ports.map((p) => p.port));
      expect({ name: workload.metadata.name, open, inCluster }).toEqual({ name: workload.metadata.name, open: workload.metadata.name === 'api' ? ['http'] : [], inCluster: ['ops'] });
      for (const rule of rules.filter((r) => r.from)) expect(rule.from).toEqual([{ namespaceSelector: {} }]);
      expect(mine[0].spec.policyTypes).toEqual(['Ingress']);
    }
  });
});
