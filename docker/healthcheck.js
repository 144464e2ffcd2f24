#!/usr/bin/env node
/*
 * The image's HEALTHCHECK. The image runs any of the apps, each with health on its own port, so this probes
 * `/healthz` on the api, gateway and dispatcher ports (as configured in the container's environment) and is healthy
 * when one answers 200. `node` is the only tool the slim image has; no curl, no wget.
 */
const ports = [
  process.env.PORT || 3000,
  process.env.GATEWAY_HEALTH_PORT || 3001,
  process.env.DISPATCHER_HEALTH_PORT || 3002,
];
const path = process.argv[2] || '/healthz';

const probe = (port) =>
  fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2000) }).then(
    (res) => res.status === 200,
    () => false,
  );

Promise.all(ports.map(probe)).then((results) => process.exit(results.some(Boolean) ? 0 : 1));
