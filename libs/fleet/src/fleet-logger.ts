/**
 * The logging the fleet objects do, in pino's (fields, message) order: the gateway hands in its pino logger,
 * the API a Nest Logger (which PinoNestLogger turns into the same structured line).
 */
export interface FleetLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
