import { describe, expect, it } from "vitest";
import { loadSettings } from "../../../core/config/settings.ts";

describe("settings from the environment", () => {
  it("has the documented defaults", () => {
    const settings = loadSettings({});
    expect(settings).toMatchObject({
      GATEWAY_PLATFORM: "local",
      PORT: 8787,
      HOST: "0.0.0.0",
      GATEWAY_DATA_DIR: ".gateway",
      GATEWAY_MAX_JSON_BODY_BYTES: 25 * 1024 * 1024,
      GATEWAY_MAX_HEADER_BYTES: 512 * 1024,
      REQUEST_TIMEOUT: 300_000,
      TRUSTED_CUSTOM_HOSTS: [],
      BLOCK_INLINE_CONFIG: false,
      ENABLE_PROMETHEUS: false,
      GATEWAY_LOG_BODIES: true,
      GATEWAY_JWT_CLOCK_TOLERANCE_SECONDS: 30,
    });
    expect(settings.GATEWAY_PUBLIC_URL).toBeUndefined();
  });

  it("reads numbers, flags and lists", () => {
    const settings = loadSettings({
      GATEWAY_PLATFORM: "aws",
      PORT: "0",
      REQUEST_TIMEOUT: " 5000 ",
      TRUSTED_CUSTOM_HOSTS: " 10.0.0.0/8, ,llm.internal ",
      BLOCK_INLINE_CONFIG: "TRUE",
      ENABLE_PROMETHEUS: "on",
      GATEWAY_LOG_BODIES: "off",
      GATEWAY_JWT_JWKS_URL: "https://issuer.example.com/.well-known/jwks.json",
      GATEWAY_JWT_JWKS: '{"keys": []}',
    });
    expect(settings).toMatchObject({
      GATEWAY_PLATFORM: "aws",
      PORT: 0,
      REQUEST_TIMEOUT: 5000,
      TRUSTED_CUSTOM_HOSTS: ["10.0.0.0/8", "llm.internal"],
      BLOCK_INLINE_CONFIG: true,
      ENABLE_PROMETHEUS: true,
      GATEWAY_LOG_BODIES: false,
    });
  });

  it("refuses bad values, naming every variable at fault in one message", () => {
    expect(() =>
      loadSettings({
        GATEWAY_PLATFORM: "gcp",
        PORT: "-1",
        REQUEST_TIMEOUT: "1.5",
        GATEWAY_JWT_JWKS_URL: "not a url",
        GATEWAY_JWT_JWKS: "{}",
      }),
    ).toThrow(
      "Invalid gateway settings: GATEWAY_PLATFORM: expected one of local, aws, got 'gcp'; PORT: expected an integer >= 0, got '-1'; REQUEST_TIMEOUT: expected an integer from 1 to 2147483647, got '1.5'; GATEWAY_JWT_JWKS_URL: expected an absolute URL, got 'not a url'; GATEWAY_JWT_JWKS: expected a JSON Web Key Set ({\"keys\": [...]})",
    );
  });
});
