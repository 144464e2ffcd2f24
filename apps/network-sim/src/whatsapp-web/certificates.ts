/**
 * The front door's certificate chain, the way WhatsApp's servers present theirs in the Noise handshake: a TEST root
 * key (generated per simulator run, never WhatsApp's), an intermediate certificate the root signs, and a leaf
 * certificate for the server's static Noise key that the intermediate signs. A client trusts the chain when its
 * WA_CERT_DETAILS hold the root's public key and serial: that is what `GET /sim/whatsapp-web/trust` hands the gateway.
 */
import type { SimWaWebTrust } from '@app/contracts';
import { randomInt } from 'node:crypto';
import { Baileys, KeyPair, newKeyPair } from './wa-kit';

export interface CertifiedServer {
  /** the server's static Noise key pair */
  staticKeyPair: KeyPair;
  /** CertChain protobuf bytes, the payload of the server hello */
  certChain: Uint8Array;
  trust: SimWaWebTrust;
}

/** A test root, an intermediate and a leaf for a fresh static key, signed as WhatsApp signs its chain. */
export function certifyServer(baileys: Baileys): CertifiedServer {
  const { Curve, proto } = baileys;
  const root = newKeyPair(baileys);
  const intermediate = newKeyPair(baileys);
  const staticKeyPair = newKeyPair(baileys);
  const rootSerial = randomInt(1, 2 ** 31);
  const intermediateSerial = randomInt(1, 2 ** 31);
  const now = Math.floor(Date.now() / 1000);
  const validity = { notBefore: now - 3600, notAfter: now + 365 * 24 * 3600 };

  const Details = proto.CertChain.NoiseCertificate.Details;
  const intermediateDetails = Details.encode({ serial: intermediateSerial, issuerSerial: rootSerial, key: intermediate.public, ...validity }).finish();
  const leafDetails = Details.encode({ serial: randomInt(1, 2 ** 31), issuerSerial: intermediateSerial, key: staticKeyPair.public, ...validity }).finish();
  const certChain = proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Buffer.from(Curve.sign(root.private, intermediateDetails)) },
    leaf: { details: leafDetails, signature: Buffer.from(Curve.sign(intermediate.private, leafDetails)) },
  }).finish();
  return { staticKeyPair, certChain, trust: { rootPublicKey: root.public.toString('base64'), serial: rootSerial } };
}
