/**
 * What the login route asks around a password check: whether the email and address may try now (429 otherwise), and
 * the outcome. The throttle itself is the limits' (`LoginThrottle`, provided as this by LimitsModule), so auth/ does
 * not reach up into limits/.
 */
export abstract class LoginGate {
  abstract admit(email: string, ip: string): Promise<void>;
  abstract failed(email: string, ip: string): Promise<void>;
  abstract succeeded(email: string, ip: string): Promise<void>;
}
