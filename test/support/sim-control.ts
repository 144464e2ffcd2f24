/**
 * The network simulator's control API (docs/network-sim.md) for tests, at a URL known once the simulator runs
 * (`url` is read on each call). Its answers are untyped JSON.
 */
export function simControl(url: () => string) {
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's answers are untyped JSON
    get: async (path: string): Promise<any> => (await fetch(url() + path)).json(),
    post: (path: string, body: object = {}): Promise<Response> =>
      fetch(url() + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  };
}
