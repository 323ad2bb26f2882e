import { describe, expect, it } from "vitest";
import { Invalid } from "../../../core/control/errors.ts";
import { checkTemplate, partialsIncluded } from "../../../core/control/prompts/templates.ts";

/** What the control plane accepts as a saved template, and which partials a template includes. */
describe("checkTemplate", () => {
  it("accepts text and chat templates with variables, sections and partials", () => {
    expect(() =>
      checkTemplate("Summarise {{text}} in {{#short}}one{{/short}}{{^short}}three{{/short}} lines."),
    ).not.toThrow();
    const chat = JSON.stringify([
      { role: "system", content: "{{> tone}} You are {{persona}}." },
      { role: "user", content: [{ type: "text", text: "{{question}}" }] },
    ]);
    expect(() => checkTemplate(chat)).not.toThrow();
    // A text that merely starts with a bracket is a text template.
    expect(() => checkTemplate("[draft] Write about {{topic}}")).not.toThrow();
  });

  it.each([
    ["an unclosed section", "Hi {{#user}}{{name}}", /Unclosed section/],
    ["an unopened section", "Hi {{/user}}", /Unopened section/],
    ["an unclosed tag", "Hi {{name", /Unclosed tag/],
    ["a chat message without a valid role", '[{"role":"robot","content":"x"}]', /role/],
    ["a chat message without content", '[{"role":"user"}]', /content/],
    ["an empty chat template", "[]", /at least one message/],
    ["a chat template that is not JSON", '[{"role":"user","content":"x"}', /not JSON/],
  ])("refuses %s, naming the field", (_name, template, message) => {
    const error = (() => {
      try {
        checkTemplate(template, "string");
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(Invalid);
    expect(error).toMatchObject({ param: "string", code: "invalid_template" });
    expect((error as Error).message).toMatch(message);
  });
});

describe("partialsIncluded", () => {
  it("finds partials at any depth, and none in a template that does not parse", () => {
    expect([...partialsIncluded("{{> intro}} {{#a}}{{#b}}{{> deep.one}}{{/b}}{{/a}} {{name}}")].sort()).toEqual([
      "deep.one",
      "intro",
    ]);
    expect(partialsIncluded("{{#open}}")).toEqual(new Set());
  });
});
