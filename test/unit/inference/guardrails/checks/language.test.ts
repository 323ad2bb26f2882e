import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

const english =
  "I am planning a trip to Japan next spring. Which cities should I visit in ten days? I love temples, gardens and good food.";
const german =
  "Ich plane nächsten Frühling eine Reise nach Japan. Welche Städte sollte ich in zehn Tagen besuchen? Ich liebe Tempel und Gärten.";
const spanish =
  "Estoy planeando un viaje a Japón la próxima primavera. ¿Qué ciudades debería visitar en diez días? Me encantan los templos.";

describe("default.language", () => {
  it("passes a text in a listed language, given as ISO 639-1, 639-3 or Portkey's code", async () => {
    for (const language of ["en", "eng", "eng_Latn", ["fr", "en"]]) {
      const result = await runCheck("default.language", { language }, checkInput({ text: english }));
      expect(result).toMatchObject({ verdict: true, data: { detected: "eng", matched: "eng" } });
    }
  });

  it("fails a text in another language, naming what it found", async () => {
    const result = await runCheck("default.language", { language: "en" }, checkInput({ text: german }));
    expect(result).toEqual({
      verdict: false,
      explanation: "The text is not in a listed language (franc's best guess is German), which it must be.",
      data: { detected: "deu", not: false },
    });
    const chinese = await runCheck(
      "default.language",
      { language: "en" },
      checkInput({ text: "我们今天下午去公园散步吧，天气很好。" }),
    );
    expect(chinese).toMatchObject({ verdict: false, data: { detected: "cmn" } });
    expect(
      (
        await runCheck(
          "default.language",
          { language: "zh" },
          checkInput({ text: "我们今天下午去公园散步吧，天气很好。" }),
        )
      ).verdict,
    ).toBe(true);
  });

  it("not: the text must be in none of the languages", async () => {
    expect(
      (await runCheck("default.language", { language: "es", not: true }, checkInput({ text: spanish }))).verdict,
    ).toBe(false);
    expect(
      (await runCheck("default.language", { language: "es", not: true }, checkInput({ text: english }))).verdict,
    ).toBe(true);
  });

  it("gives a short text franc is unsure of the benefit of the doubt", async () => {
    // franc's best guess for this English request is Danish; English scores close behind.
    const prompt = "Can you help me write a cover letter for a software engineering job at a startup?";
    const result = await runCheck("default.language", { language: "en" }, checkInput({ text: prompt }));
    expect(result.verdict).toBe(true);
    expect(result.explanation).toContain("too close to tell on a short text");
  });

  it("passes a text too short to tell, saying so", async () => {
    const result = await runCheck("default.language", { language: "de" }, checkInput({ text: "Thanks, great!" }));
    expect(result).toEqual({
      verdict: true,
      explanation: "The text is too short to tell its language; the check passes.",
      data: { detected: "und", not: false },
    });
  });

  it("answers to portkey.language; refuses codes franc cannot detect", async () => {
    expect((await runCheck("portkey.language", { language: ["deu_Latn"] }, checkInput({ text: german }))).verdict).toBe(
      true,
    );
    expect(await problemOf("default.language", { language: ["en", "xx", "la"] })).toEqual({
      path: "parameters",
      message: "language 'xx', 'la' cannot be detected (an ISO 639-1 or 639-3 code of a language franc knows)",
    });
    expect(await problemOf("default.language", { language: [] })).toMatchObject({ path: "parameters.language" });
  });

  it("reads 1 MB in reasonable time", async () => {
    const text = `${german} `.repeat(8_000);
    const started = performance.now();
    const result = await runCheck("default.language", { language: "de" }, checkInput({ text }));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.verdict).toBe(true);
  });
});
