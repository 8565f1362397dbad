import type { IncludeSite } from "./check-template.ts";
import type { HbsStatement } from "./handlebars-ast.ts";
import { parseTemplateText } from "./handlebars-parser.ts";
import { prebuiltAst } from "./prebuilt-asts.ts";

/**
 * The statement of a checked file at which its count, with every include expanded in place,
 * first exceeds `max`: statements are counted in document order, nested ones included, an
 * include as one plus its file's expanded count. Cached files keep no AST (it is most of
 * their memory), so the file is parsed again: this runs only to report the error.
 */
export function locateCrossing(
  text: string,
  includes: readonly IncludeSite[],
  expandedOf: ReadonlyMap<string, number>,
  max: number,
): { line?: number; column?: number } {
  const ast = prebuiltAst(text) ?? parseTemplateText(text);
  let running = 0;
  let include = 0;
  const walk = (body: readonly HbsStatement[]): HbsStatement | undefined => {
    for (const node of body) {
      running++;
      if (node.type === "PartialStatement") {
        // The checker listed the includes in this same order.
        const site = includes[include++];
        running += site === undefined ? 0 : (expandedOf.get(site.target) ?? 0);
      }
      if (running > max) return node;
      if (node.type === "BlockStatement") {
        const hit = walk(node.program?.body ?? []) ?? walk(node.inverse?.body ?? []);
        if (hit !== undefined) return hit;
      }
    }
    return undefined;
  };
  const start = walk(ast.body)?.loc?.start;
  return start === undefined ? {} : { line: start.line, column: start.column + 1 };
}
