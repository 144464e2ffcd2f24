import { LookupAddress } from 'node:dns';
import { forbiddenHostReason, guardedLookup, isAddressLiteral, LookupFunction, normalizeHostname, TargetRefusedError } from '@app/net-guard';

/**
 * The address guard for broker connections (libs/net-guard, as for webhooks): unless private targets are allowed, a
 * host whose name or any resolved address is private, loopback, link-local or metadata is refused. `lookup` is what
 * net/tls.connect use, so the address actually dialled is the one checked (a literal is checked by its spelling).
 */
export class BrokerAddressGuard {
  readonly lookup: LookupFunction | undefined;

  constructor(readonly allowPrivateTargets: boolean) {
    this.lookup = allowPrivateTargets ? undefined : guardedLookup();
  }

  /** Throws TargetRefusedError for a refused spelling (an address literal, a loopback or metadata name). */
  assertHost(hostname: string): void {
    if (this.allowPrivateTargets) return;
    const name = normalizeHostname(hostname) ?? hostname;
    // plain `localhost` is left to the lookup, which refuses the loopback address it resolves to
    const reason = name === 'localhost' ? null : forbiddenHostReason(hostname);
    if (reason) throw new TargetRefusedError(reason);
  }

  /**
   * The address to dial for `hostname`, checked: a literal as it is, a name resolved through the guarded lookup (a
   * client that cannot take a lookup function dials this address, so a rebinding answer cannot slip in between).
   */
  async resolve(hostname: string): Promise<string> {
    this.assertHost(hostname);
    const name = normalizeHostname(hostname) ?? hostname;
    if (isAddressLiteral(name) || !this.lookup) return name;
    const lookup = this.lookup;
    return new Promise((resolve, reject) =>
      lookup(name, { all: true }, (err, addresses) => (err ? reject(err) : resolve((addresses as LookupAddress[])[0].address))),
    );
  }
}
