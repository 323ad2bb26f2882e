import { afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_JSON_DEPTH,
  nestsDeeperThan,
  setMaxJsonDepth,
  textMayNestDeeperThanLimit,
} from "../../../core/util/json-depth.ts";

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function nested(depth: number, next: () => number): unknown {
  if (depth === 0) return next() < 0.5 ? "leaf {[" : 1;
  const inner = nested(depth - 1, next);
  return next() < 0.5 ? [inner, "x"] : { a: inner, b: "]}" };
}

describe("textMayNestDeeperThanLimit", () => {
  afterEach(() => setMaxJsonDepth(DEFAULT_MAX_JSON_DEPTH));

  it("never says no for a text nested deeper than the limit (so the exact walk is never skipped wrongly)", () => {
    setMaxJsonDepth(8);
    const next = random(7);
    for (let i = 0; i < 500; i++) {
      const value = nested(Math.floor(next() * 16), next);
      const text = JSON.stringify({ model: "m", messages: [{ role: "user", content: value }] });
      if (nestsDeeperThan(JSON.parse(text), 8)) expect(textMayNestDeeperThanLimit(text)).toBe(true);
    }
  });

  it("says no for a usual chat body, so the walk is skipped", () => {
    const body = JSON.stringify({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Hello ".repeat(200) },
      ],
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }],
    });
    expect(textMayNestDeeperThanLimit(body)).toBe(false);
  });
});
