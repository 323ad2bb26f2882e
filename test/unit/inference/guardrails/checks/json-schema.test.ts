import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

const ticket = {
  type: "object",
  required: ["category", "priority", "summary"],
  properties: {
    category: { enum: ["billing", "technical", "account"] },
    priority: { type: "integer", minimum: 1, maximum: 5 },
    summary: { type: "string", maxLength: 200 },
    order_id: { type: "string", pattern: "^ORD-[0-9]{6}$" },
  },
  additionalProperties: false,
};

const answer = (text: string) => checkInput({ phase: "output", text, prompt: "Classify this support ticket as JSON." });

describe("default.jsonSchema", () => {
  it("passes raw JSON that the schema accepts", async () => {
    const text = '{"category": "billing", "priority": 2, "summary": "Charged twice for May", "order_id": "ORD-004512"}';
    const result = await runCheck("default.jsonSchema", { schema: ticket }, answer(text));
    expect(result).toEqual({
      verdict: true,
      explanation: "The JSON matches the schema.",
      data: { json_found: true, valid: true, not: false },
    });
  });

  it("reads JSON in a ```json block of a chatty answer, and says why it fails without quoting it", async () => {
    const text = [
      "Here is the classification you asked for:",
      "```json",
      '{"category": "shipping", "priority": 2, "summary": "Parcel lost, customer address 12 Elm Street"}',
      "```",
      "Let me know if you need anything else!",
    ].join("\n");
    const result = await runCheck("default.jsonSchema", { schema: ticket }, answer(text));
    expect(result.verdict).toBe(false);
    expect(result.data?.error).toBe("/category must be equal to one of the allowed values");
    expect(JSON.stringify(result)).not.toContain("Elm Street");
  });

  it("reads an object an answer wraps in a sentence", async () => {
    const text = 'Sure! {"category": "technical", "priority": 4, "summary": "App crashes on login"} Hope that helps.';
    expect((await runCheck("default.jsonSchema", { schema: ticket }, answer(text))).verdict).toBe(true);
  });

  it("runs the schema's patterns on RE2", async () => {
    const text = '{"category": "billing", "priority": 1, "summary": "Refund", "order_id": "ORD-12"}';
    const result = await runCheck("default.jsonSchema", { schema: ticket }, answer(text));
    expect(result.verdict).toBe(false);
    expect(result.data?.error).toBe('/order_id must match pattern "^ORD-[0-9]{6}$"');
  });

  it("fails prose without JSON, and not inverts", async () => {
    const prose = answer("I could not classify this ticket: the customer did not say what went wrong.");
    const result = await runCheck("default.jsonSchema", { schema: ticket }, prose);
    expect(result).toMatchObject({ verdict: false, explanation: "The text carries no JSON object or array." });
    const inverted = await runCheck(
      "default.jsonSchema",
      { schema: ticket, not: true },
      answer('{"category": "billing"}'),
    );
    expect(inverted.verdict).toBe(true);
  });

  it("follows the schema's declared draft", async () => {
    const draft7 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "array",
      items: [{ type: "string" }, { type: "number" }],
    };
    expect((await runCheck("default.jsonSchema", { schema: draft7 }, answer('["total", 42]'))).verdict).toBe(true);
    expect((await runCheck("default.jsonSchema", { schema: draft7 }, answer('[42, "total"]'))).verdict).toBe(false);
  });

  it("accepts the schema as JSON text (as Portkey's UI sends it)", async () => {
    const result = await runCheck("default.jsonSchema", { schema: JSON.stringify(ticket) }, answer('{"priority": 9}'));
    expect(result.verdict).toBe(false);
  });

  it("refuses, when saved, a schema that does not compile, fetches, uses look-around or shadows a meta-schema", async () => {
    expect(await problemOf("default.jsonSchema", { schema: { type: "strnig" } })).toMatchObject({
      path: "parameters",
      message: expect.stringContaining("the schema does not compile"),
    });
    expect(
      await problemOf("default.jsonSchema", { schema: { $ref: "https://schemas.example.com/order.json" } }),
    ).toMatchObject({
      message: expect.stringContaining("can't resolve reference"),
    });
    expect(await problemOf("default.jsonSchema", { schema: { type: "string", pattern: "^(?!admin)" } })).toMatchObject({
      message: expect.stringContaining("(?!"),
    });
    expect(
      await problemOf("default.jsonSchema", { schema: { $id: "https://json-schema.org/draft/2020-12/schema" } }),
    ).toMatchObject({ message: expect.stringContaining("names a schema the validator holds") });
    expect(
      await problemOf("default.jsonSchema", { schema: { $schema: "http://json-schema.org/draft-04/schema#" } }),
    ).toMatchObject({
      message: expect.stringContaining("unsupported $schema"),
    });
    expect(await problemOf("default.jsonSchema", { schema: "not json" })).toMatchObject({ path: "parameters.schema" });
    expect(await problemOf("default.jsonSchema", {})).toMatchObject({ path: "parameters.schema" });
    // The meta-schema is still there after the refused one.
    expect((await runCheck("default.jsonSchema", { schema: ticket }, answer('{"priority": 1}'))).verdict).toBe(false);
  });

  it("gives two schemas with the same $id their own validators", async () => {
    const object = { $id: "https://example.com/answer", type: "object" };
    const array = { $id: "https://example.com/answer", type: "array" };
    expect((await runCheck("default.jsonSchema", { schema: object }, answer('{"a": 1}'))).verdict).toBe(true);
    expect((await runCheck("default.jsonSchema", { schema: array }, answer('{"a": 1}'))).verdict).toBe(false);
  });

  it("validates 1 MB of JSON in reasonable time", async () => {
    const rows = Array.from({ length: 12_000 }, (_, i) => ({
      id: i,
      sku: `SKU-${100000 + i}`,
      name: `Widget number ${i}`,
      price: 9.99,
    }));
    const text = JSON.stringify({ rows });
    expect(text.length).toBeGreaterThan(800_000);
    const schema = {
      type: "object",
      properties: {
        rows: {
          type: "array",
          items: {
            type: "object",
            required: ["id", "sku"],
            properties: { sku: { type: "string", pattern: "^SKU-[0-9]+$" } },
          },
        },
      },
    };
    const started = performance.now();
    const result = await runCheck("default.jsonSchema", { schema }, answer(text));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.verdict).toBe(true);
  });
});
