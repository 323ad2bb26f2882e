import { describe, expect, it } from "vitest";
import { applyParams } from "../../../../core/inference/routing/params.ts";

describe("override, default and drop params", () => {
  const body = { model: "gpt-4o", temperature: 0.2, user: "u1", stream_options: { include_usage: true, other: 1 } };

  it("forces overrides, fills defaults only where missing, and drops names and dotted paths", () => {
    const out = applyParams(body, {
      overrideParams: { model: "forced", max_tokens: 5 },
      defaultParams: { temperature: 0.9, top_p: 0.5 },
      dropParams: ["user", "stream_options.include_usage", "absent"],
    });
    expect(out).toEqual({ model: "forced", temperature: 0.2, top_p: 0.5, max_tokens: 5, stream_options: { other: 1 } });
  });

  it("never mutates the client's body and returns it as is without rules", () => {
    const copy = structuredClone(body);
    applyParams(body, { overrideParams: { model: "x" }, dropParams: ["stream_options.other"] });
    expect(body).toEqual(copy);
    expect(applyParams(body, {})).toBe(body);
  });

  it("applies overrides after defaults, so an override of a defaulted key wins", () => {
    expect(applyParams({}, { defaultParams: { a: 1 }, overrideParams: { a: 2 } })).toEqual({ a: 2 });
  });
});
