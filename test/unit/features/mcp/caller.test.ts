import { describe, expect, it } from "vitest";
import type { Services } from "../../../../core/services.ts";
import { checkOrigin } from "../../../../core/features/mcp/endpoint/caller.ts";

const services = (publicUrl?: string, allowed: string[] = []) =>
  ({ settings: { GATEWAY_PUBLIC_URL: publicUrl, MCP_ALLOWED_ORIGINS: allowed } }) as unknown as Services;
const request = (origin?: string) =>
  new Request("http://evil.example/mcp/x", { method: "POST", headers: origin ? { origin } : {} });

describe("MCP endpoint origin check (DNS rebinding)", () => {
  it("lets requests without an Origin through (non-browser clients)", () => {
    expect(() => checkOrigin(request(), services())).not.toThrow();
  });
  it("allows loopback, the public URL's origin and configured origins", () => {
    expect(() => checkOrigin(request("http://localhost:6274"), services())).not.toThrow();
    expect(() => checkOrigin(request("http://127.0.0.1:3000"), services())).not.toThrow();
    expect(() => checkOrigin(request("https://gw.example.com"), services("https://gw.example.com/"))).not.toThrow();
    expect(() =>
      checkOrigin(request("https://app.example"), services(undefined, ["https://app.example"])),
    ).not.toThrow();
  });
  it("refuses other origins even when Host agrees with them", () => {
    expect(() => checkOrigin(request("http://evil.example"), services("https://gw.example.com"))).toThrow(
      expect.objectContaining({ status: 403 }),
    );
    expect(() => checkOrigin(request("null"), services())).toThrow(expect.objectContaining({ status: 403 }));
  });
});
