import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The import graph of the sources, read as text (the fitness tests of test/unit/control hold the layering to
 * it): every relative import of a file, static, type-only or dynamic, resolved to a path from the repository
 * root (`core/inference/gateway/inference.ts`).
 */

export const ROOT = resolve(import.meta.dirname, "../..");

export type ImportKind = "static" | "type" | "dynamic";

export interface SourceImport {
  /** From the repository root. */
  to: string;
  kind: ImportKind;
}

/** Every .ts file under `dir` (a path from the root), as paths from the root. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(dir, name).split("\\").join("/"))
    .sort();
}

const STATIC = /^(import|export)\s+(type\s+)?([^;]*?)\s*from\s+"([^"]+)";/gms;
const BARE = /^import\s+"([^"]+)";/gm;
const DYNAMIC = /(?<!typeof )import\(\s*"([^"]+)"\s*\)/g;
const TYPE_OF = /typeof import\(\s*"([^"]+)"\s*\)/g;

/** `{ type A, type B }`: an import whose every name is a type. */
const onlyTypes = (clause: string) => {
  const names = /^\{([^}]*)\}$/s.exec(clause.trim())?.[1];
  if (names === undefined) return false;
  const list = names
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  return list.length > 0 && list.every((name) => name.startsWith("type "));
};

/** The relative imports of one file. */
export function importsOf(file: string): SourceImport[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const at = (specifier: string) =>
    relative(ROOT, resolve(ROOT, dirname(file), specifier))
      .split("\\")
      .join("/");
  const found: SourceImport[] = [];
  for (const [, , typeWord, clause, specifier] of text.matchAll(STATIC)) {
    if (!specifier!.startsWith(".")) continue;
    found.push({ to: at(specifier!), kind: typeWord || onlyTypes(clause!) ? "type" : "static" });
  }
  for (const [, specifier] of text.matchAll(BARE)) {
    if (specifier!.startsWith(".")) found.push({ to: at(specifier!), kind: "static" });
  }
  for (const [, specifier] of text.matchAll(DYNAMIC)) {
    if (specifier!.startsWith(".")) found.push({ to: at(specifier!), kind: "dynamic" });
  }
  for (const [, specifier] of text.matchAll(TYPE_OF)) {
    if (specifier!.startsWith(".")) found.push({ to: at(specifier!), kind: "type" });
  }
  return found;
}

/** The import graph of every .ts file under `dir`. */
export function importGraph(dir: string): Map<string, SourceImport[]> {
  return new Map(sourceFiles(dir).map((file) => [file, importsOf(file)]));
}

/**
 * The import circles of a graph: strongly connected components of more than one file (or a file importing
 * itself), each as the imports that tie it (`a.ts -> b.ts (type)`), for a failure message that shows the way round.
 */
export function importCircles(graph: Map<string, SourceImport[]>): string[][] {
  return components(graph).map((members) => {
    const inside = new Set(members);
    return members.flatMap((file) =>
      (graph.get(file) ?? []).filter(({ to }) => inside.has(to)).map(({ to, kind }) => `${file} -> ${to} (${kind})`),
    );
  });
}

function components(graph: Map<string, SourceImport[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const { to } of graph.get(file) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    const selfImport = (graph.get(file) ?? []).some(({ to }) => to === file);
    if (component.length > 1 || selfImport) circles.push(component.reverse());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}
