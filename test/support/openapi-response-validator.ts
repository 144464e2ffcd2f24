import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Checks an HTTP answer against the committed API document (docs/openapi.json), the contract outside tools read:
 * the status must be one its operation documents, the Content-Type one the response lists, and a JSON body must
 * validate against the response's schema (JSON Schema 2020-12, so plain Ajv2020 reads it). A path outside the
 * document but under the API prefix must be answered with the error envelope. Paths that are not API operations
 * (Swagger UI, the dashboard's files) are not checked.
 */
export class OpenApiResponseValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly operations: Operation[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDocument) {
    this.ajv.addSchema(doc as object, DOC_ID);
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!METHODS.has(method)) continue;
        const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
        this.operations.push({ method, template, pattern: new RegExp(`^${source}$`), literal: template.replace(/\{[^}]+\}/g, '').length, op });
      }
    }
    // `/sessions/{id}:start` before `/sessions/{id}`: the template with the most literal text wins, as the router does
    this.operations.sort((a, b) => b.literal - a.literal);
  }

  /** The operation a request reaches (`operationId`), or undefined outside the document. */
  operationOf(method: string, url: string): string | undefined {
    const found = this.find(method, url.split('?')[0]);
    return found && (found.op.operationId ?? found.template);
  }

  private find(method: string, path: string): Operation | undefined {
    return this.operations.find((o) => o.method === method.toLowerCase() && o.pattern.test(path));
  }

  /** Every operation of the document, by `operationId`. */
  operationIds(): string[] {
    return this.operations.map((o) => o.op.operationId ?? o.template);
  }

  /** The problems of one answer, empty when it is what the document says. */
  check(method: string, url: string, status: number, contentType: string | undefined, body: unknown, rawLength: number): string[] {
    const m = method.toLowerCase();
    const path = url.split('?')[0];
    if (!isApiPath(path) || m === 'head' || m === 'options') return [];
    const where = `${method.toUpperCase()} ${path} → ${status}`;
    const found = this.find(m, path);
    if (!found) {
      if (status < 400) return [`${where}: answered ${status} on a route the document does not have`];
      return this.checkBody(where, `${DOC_ID}#/components/schemas/ErrorEnvelope`, body, contentType);
    }
    const id = found.op.operationId ?? found.template;
    const status$ = String(status) in found.op.responses ? String(status) : 'default';
    const declared = found.op.responses[status$];
    if (!declared) return [`${where}: ${id} does not document status ${status} (documents ${Object.keys(found.op.responses).join(', ')})`];
    const { response, pointer } = this.resolve(declared, `/paths/${escapePointer(found.template)}/${found.method}/responses/${status$}`);
    const content = response.content ?? {};
    if (rawLength === 0) return Object.keys(content).length === 0 ? [] : [`${where}: ${id} ${status} documents a body (${Object.keys(content).join(', ')}), got none`];
    const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
    const key = Object.keys(content).find((k) => mediaMatches(k, mediaType));
    if (!key) return [`${where}: ${id} ${status} documents ${Object.keys(content).join(', ') || 'no body'}, got ${mediaType || 'no Content-Type'}`];
    if (!content[key].schema || !/^application\/(.+\+)?json$/.test(mediaType)) return [];
    return this.checkBody(`${where} (${id})`, `${DOC_ID}#${pointer}/content/${escapePointer(key)}/schema`, body, contentType);
  }

  private checkBody(where: string, ref: string, body: unknown, contentType: string | undefined): string[] {
    if (!/json/i.test(contentType ?? '')) return [`${where}: expected a JSON body, got ${contentType ?? 'no Content-Type'}`];
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${where}: body${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  /** A response object, following a `$ref` into components.responses, with the JSON pointer it sits at. */
  private resolve(declared: ResponseObject | { $ref: string }, pointer: string): { response: ResponseObject; pointer: string } {
    if (!('$ref' in declared)) return { response: declared, pointer };
    const name = declared.$ref.split('/').pop()!;
    return { response: this.doc.components.responses![name], pointer: declared.$ref.replace(/^#/, '') };
  }
}

const DOC_ID = 'https://messaging-gateway.invalid/openapi.json';
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);
const isApiPath = (path: string) => path.startsWith('/api/v1/') || path === '/healthz' || path === '/readyz';
const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const mediaMatches = (documented: string, actual: string) =>
  documented === '*/*' || documented === actual || (documented.endsWith('/*') && actual.startsWith(documented.slice(0, -1)));

interface ResponseObject {
  description?: string;
  content?: Record<string, { schema?: object }>;
}
interface OperationObject {
  operationId?: string;
  responses: Record<string, ResponseObject | { $ref: string }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas?: Record<string, object>; responses?: Record<string, ResponseObject> };
}
interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  literal: number;
  op: OperationObject;
}

let committed: OpenApiResponseValidator | undefined;

/** The validator over docs/openapi.json, read once per test file. */
export function committedDocumentValidator(): OpenApiResponseValidator {
  committed ??= new OpenApiResponseValidator(JSON.parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8')));
  return committed;
}
