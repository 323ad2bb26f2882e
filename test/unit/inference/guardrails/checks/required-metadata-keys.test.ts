import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

const request = (metadata: Record<string, string>) =>
  checkInput({ text: "Translate this email into French.", metadata });

describe("default.requiredMetadataKeys", () => {
  const metadata = { _user: "u_4821", team: "support", environment: "production" };

  it("all (default): passes when every key is there, naming keys, never values", async () => {
    const result = await runCheck(
      "default.requiredMetadataKeys",
      { metadataKeys: ["_user", "team"] },
      request(metadata),
    );
    expect(result).toEqual({
      verdict: true,
      explanation: "Passed: 2 of the 2 metadata keys are present, and all must be.",
      data: { operator: "all", present_keys: ["_user", "team"], missing_keys: [] },
    });
    expect(JSON.stringify(result)).not.toContain("u_4821");
    const missing = await runCheck(
      "default.requiredMetadataKeys",
      { metadataKeys: ["_user", "cost_center"] },
      request(metadata),
    );
    expect(missing).toMatchObject({ verdict: false, data: { missing_keys: ["cost_center"] } });
  });

  it("any and none", async () => {
    expect(
      (
        await runCheck(
          "default.requiredMetadataKeys",
          { metadataKeys: ["cost_center", "team"], operator: "any" },
          request(metadata),
        )
      ).verdict,
    ).toBe(true);
    expect(
      (await runCheck("default.requiredMetadataKeys", { metadataKeys: ["debug"], operator: "none" }, request(metadata)))
        .verdict,
    ).toBe(true);
    expect(
      (await runCheck("default.requiredMetadataKeys", { metadataKeys: ["team"], operator: "none" }, request(metadata)))
        .verdict,
    ).toBe(false);
  });

  it("fails all on a request without metadata; an inherited name is not a key", async () => {
    expect((await runCheck("default.requiredMetadataKeys", { metadataKeys: ["_user"] }, request({}))).verdict).toBe(
      false,
    );
    expect((await runCheck("default.requiredMetadataKeys", { metadataKeys: ["toString"] }, request({}))).verdict).toBe(
      false,
    );
  });

  it("runs on input only and needs at least one key", async () => {
    expect(await problemOf("default.requiredMetadataKeys", { metadataKeys: ["a"] }, "output")).toMatchObject({
      path: "id",
    });
    expect(await problemOf("default.requiredMetadataKeys", { metadataKeys: [] })).toMatchObject({
      path: "parameters.metadataKeys",
    });
  });
});
