import type { Metafile } from "esbuild";

/**
 * What a bundled function loads at init: its entry chunk and every chunk that one imports statically,
 * transitively (dynamic imports are chunks loaded on first use). Shared by bench/bundle-size.ts and the test
 * that keeps admin-only modules out of data-plane cold starts.
 */
export function initChunks(outputs: Metafile["outputs"], entryOutput: string): string[] {
  const loaded = new Set<string>();
  const visit = (output: string) => {
    if (loaded.has(output) || !outputs[output]) return;
    loaded.add(output);
    for (const imported of outputs[output]!.imports)
      if (imported.kind === "import-statement" && !imported.external) visit(imported.path);
  };
  visit(entryOutput);
  return [...loaded];
}
