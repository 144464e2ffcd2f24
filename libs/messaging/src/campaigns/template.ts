/**
 * A campaign's message template (CONTRACT 17): `{{name}}` in the text (or caption) is replaced by the recipient's
 * variable `name`. Rendered once per recipient when its message is enqueued; checked for every recipient when the
 * campaign is created, so a missing variable is a 422 then, never a failure halfway through.
 */
const VARIABLE = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

/** The variables a template names, each once, in order. */
export function templateVariables(template: string): string[] {
  return [...new Set([...template.matchAll(VARIABLE)].map((m) => m[1]))];
}

/** The first variable the template names that `variables` lacks, or null. */
export function missingVariable(template: string, variables: Record<string, string>): string | null {
  return templateVariables(template).find((name) => !Object.prototype.hasOwnProperty.call(variables, name)) ?? null;
}

/** The template with every variable replaced (a missing one is a programming error: creation checked them all). */
export function renderTemplate(template: string, variables: Record<string, string>): string {
  return template.replace(VARIABLE, (_all, name: string) => {
    if (!Object.prototype.hasOwnProperty.call(variables, name)) throw new Error(`template variable ${name} is missing`);
    return String(variables[name]);
  });
}
