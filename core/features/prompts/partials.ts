import type { Principal } from "../../auth/principal.ts";
import { usablePartial } from "../../control/prompts/access.ts";
import { readPartialVersion } from "../../control/prompts/store.ts";
import { badRequest } from "../../http/errors.ts";
import type { Records } from "../../store/ports.ts";
import { type MustacheToken, type TemplateNeeds, collectNeeds, mustacheTokens } from "./template.ts";

/**
 * Loads the partials (`{{> slug}}`) a template includes, and the partials those include, each at its published
 * version and only if the caller may use it (usablePartial). Bounded: a chain of includes deeper than
 * MAX_PARTIAL_DEPTH, more than MAX_PARTIALS distinct partials, or partials including each other in a cycle answer
 * 400, so rendering always ends. A partial that is missing (or another workspace's) answers 400 naming it.
 */

export const MAX_PARTIAL_DEPTH = 5;
export const MAX_PARTIALS = 32;

export interface LoadedPartial {
  text: string;
  tokens: MustacheToken[];
  /** The partials this one includes. */
  includes: Set<string>;
}

export async function loadPartials(
  records: Records,
  principal: Principal,
  needs: TemplateNeeds,
): Promise<Map<string, LoadedPartial>> {
  const loaded = new Map<string, LoadedPartial>();
  // Longest chain of includes starting at each partial already checked (1: it includes none), so a partial
  // included from many places is walked once.
  const heights = new Map<string, number>();

  const tooDeep = (chain: string[]) =>
    badRequest(
      `Prompt partials are nested deeper than ${MAX_PARTIAL_DEPTH} levels: ${chain.join(" > ")}.`,
      "template",
      "partial_depth_exceeded",
    );

  const visit = async (slug: string, chain: string[]): Promise<number> => {
    const path = [...chain, slug];
    if (chain.includes(slug)) {
      throw badRequest(
        `Prompt partials include each other in a cycle: ${path.join(" > ")}.`,
        "template",
        "partial_cycle",
      );
    }
    if (path.length > MAX_PARTIAL_DEPTH) throw tooDeep(path);
    const known = heights.get(slug);
    if (known !== undefined) {
      if (chain.length + known > MAX_PARTIAL_DEPTH) throw tooDeep(path);
      return known;
    }
    let partial = loaded.get(slug);
    if (!partial) {
      if (loaded.size >= MAX_PARTIALS) {
        throw badRequest(
          `A prompt may include at most ${MAX_PARTIALS} distinct partials.`,
          "template",
          "too_many_partials",
        );
      }
      partial = await loadOne(records, principal, slug, needs);
      loaded.set(slug, partial);
    }
    let height = 1;
    for (const include of partial.includes) height = Math.max(height, 1 + (await visit(include, path)));
    heights.set(slug, height);
    return height;
  };

  for (const slug of [...needs.partials]) await visit(slug, []);
  return loaded;
}

async function loadOne(
  records: Records,
  principal: Principal,
  slug: string,
  needs: TemplateNeeds,
): Promise<LoadedPartial> {
  const resource = await usablePartial(records, principal, slug);
  const version = resource && (await readPartialVersion(records, resource.id, resource.defaultVersion));
  if (!version) throw badRequest(`The prompt partial '${slug}' does not exist.`, "template", "partial_not_found");
  // Its own needs, and what it adds to the whole template's (variables used inside partials must be given too).
  const tokens = mustacheTokens(version.string, `the partial '${slug}'`);
  const own = collectNeeds(tokens, {
    variables: needs.variables,
    sections: needs.sections,
    partials: new Set(),
  });
  for (const include of own.partials) needs.partials.add(include);
  return { text: version.string, tokens, includes: own.partials };
}
