import { describe, expect, it } from "vitest";
import { HttpError } from "../../../core/http/errors.ts";
import { withoutPathEchoes } from "../../../core/http/path-echoes.ts";

describe("path ids echoed in a body (portkey-ai)", () => {
  it("an echo equal to the path's id is taken out; the rest of the body stays", () => {
    const body = { workspace_id: "ws_1", users: [{ id: "u", role: "member" }] };
    expect(withoutPathEchoes(body, { workspace_id: "ws_1" })).toEqual({ users: [{ id: "u", role: "member" }] });
    expect(body).toHaveProperty("workspace_id");
    // Absent or null echoes are nothing to check.
    expect(withoutPathEchoes({ role: "admin" }, { user_id: "u_1" })).toEqual({ role: "admin" });
    expect(withoutPathEchoes({ user_id: null, role: "admin" }, { user_id: "u_1" })).toEqual({ role: "admin" });
  });

  it("an echo naming another resource answers 400 naming the field", () => {
    let thrown: unknown;
    try {
      withoutPathEchoes({ export_id: "exp_2", description: "x" }, { export_id: "exp_1" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect(thrown).toMatchObject({ status: 400, param: "export_id", code: "id_mismatch" });
    expect(() => withoutPathEchoes({ feedback_id: 7 }, { feedback_id: "7" })).toThrow(HttpError);
  });

  it("leaves what is no object to the schema", () => {
    expect(withoutPathEchoes([1], { id: "x" })).toEqual([1]);
    expect(withoutPathEchoes("text", { id: "x" })).toBe("text");
  });
});
