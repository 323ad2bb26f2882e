import { describe, expect, it } from "vitest";
import { withMember } from "../../../../core/inference/guardrails/phases.ts";

describe("withMember (hook_results added to an answer's own text)", () => {
  const results = JSON.stringify({ before_request_hooks: [{ verdict: true }], after_request_hooks: [] });

  it("adds the member to an object, keeping the answer's bytes before it", () => {
    const text = '{"id":"chatcmpl-1","choices":[{"message":{"content":"} not the end"}}]}\n';
    const added = withMember(text, "hook_results", results)!;
    expect(added.startsWith(text.slice(0, text.lastIndexOf("}")))).toBe(true);
    expect(JSON.parse(added)).toEqual({ ...JSON.parse(text), hook_results: JSON.parse(results) });
  });

  it("writes no separator into an empty object, whatever whitespace it holds", () => {
    expect(JSON.parse(withMember("{}", "hook_results", results)!)).toEqual({ hook_results: JSON.parse(results) });
    expect(JSON.parse(withMember(" {\n\t} ", "hook_results", results)!)).toEqual({
      hook_results: JSON.parse(results),
    });
  });

  it("leaves anything that is not a JSON object alone", () => {
    for (const text of ["[1,2]", '"text"', "", "   ", "{", "}", "null"]) {
      expect(withMember(text, "hook_results", results)).toBeUndefined();
    }
  });
});
