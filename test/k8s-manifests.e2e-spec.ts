import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { GatewayConfig } from '@app/config';
import { REPO_ROOT } from './support/run-context';

// js-yaml comes with the test tooling; only its loader is needed
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { loadAll } = require('js-yaml') as { loadAll(text: string): unknown[] };

interface Manifest {
  kind: string;
  metadata: { name: string };
  spec?: any;
  data?: Record<string, string>;
}

function render(): Manifest[] | null {
  try {
    return loadAll(execFileSync('kubectl', ['kustomize', join(REPO_ROOT, 'k8s', 'base')], { encoding: 'utf8' })) as Manifest[];
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
    expect(container.lifecycle.preStop.exec.command).toEqual(['node', 'dist/apps/cli/src/main.js', 'gateway:drain', '--id', '$(GATEWAY_ID)']);
    expect(container.env.find((e: { name: string }) => e.name === 'GATEWAY_ID').valueFrom.fieldRef.fieldPath).toBe('metadata.name');
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
