import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

const recipe = `Classic Pancakes

Ingredients:
- 1 cup flour
- 2 tablespoons sugar
- 1 egg
- 1 cup milk; or oat milk

Instructions:
1. Whisk the flour and sugar in a bowl.
2. Add the egg and milk; stir until smooth.
3. Heat a pan over medium heat and pour 1/4 cup batter for each pancake.
4. Flip when bubbles form (about 2 minutes).
Total = 8 pancakes.`;

const email = `Hi Sarah,

Thanks for sending over the Q3 report. A few notes:
- Revenue is up 12% (nice!)
- Could you double-check the totals on page 4?
- Costs -> see appendix B;

If you have time on Thursday, let's meet at 2pm.
Select the slides from the shared folder when you can.
For example: the intro, the roadmap and the budget.

Best,
Tom`;

const pythonQuestion = `Can you tell me why this returns the wrong average?

def average(numbers):
    if not numbers:
        return 0
    total = 0
    for n in numbers:
        total += n
    return total / len(numbers) - 1

Thanks!`;

const sqlQuestion = `Here is the query I run every morning:
SELECT c.name, SUM(o.total) AS revenue
FROM customers c
JOIN orders o ON o.customer_id = c.id
WHERE o.created_at >= '2024-01-01'
GROUP BY c.name
ORDER BY revenue DESC;
It got slow last week. Why?`;

describe("default.containsCode", () => {
  it("does not take a recipe or an email for code", async () => {
    for (const text of [recipe, email]) {
      const result = await runCheck("default.containsCode", {}, checkInput({ text }));
      expect(result).toMatchObject({ verdict: false, data: { found: false, blocks: [] } });
      expect(result.explanation).toBe("The text contains no code, which it must.");
    }
  });

  it("finds a pasted Python function and a pasted SQL query, with their languages", async () => {
    const python = await runCheck("default.containsCode", {}, checkInput({ text: pythonQuestion }));
    expect(python).toMatchObject({
      verdict: true,
      data: { blocks: [{ language: "Python", fenced: false, lines: 7 }] },
    });
    const sql = await runCheck("default.containsCode", { format: "SQL" }, checkInput({ text: sqlQuestion }));
    expect(sql).toMatchObject({ verdict: true, data: { format: "SQL", blocks: [{ language: "SQL", fenced: false }] } });
    const oneLine = await runCheck(
      "default.containsCode",
      { format: "sql" },
      checkInput({ text: "Is this right?\nselect * from invoices where paid = false;" }),
    );
    expect(oneLine.verdict).toBe(true);
  });

  it("reads fenced blocks by their tag, and `format` picks a language", async () => {
    const answer = [
      "Here is the component:",
      "```tsx",
      "export function Badge({ label }: { label: string }) {",
      '  return <span className="badge">{label}</span>;',
      "}",
      "```",
      "And the config:",
      "```yaml",
      "theme: dark",
      "```",
    ].join("\n");
    const any = await runCheck("default.containsCode", {}, checkInput({ phase: "output", text: answer }));
    expect(any.data?.blocks).toEqual([{ language: "TypeScript", fenced: true, lines: 3 }]);
    const typescript = await runCheck(
      "default.containsCode",
      { format: "TypeScript" },
      checkInput({ phase: "output", text: answer }),
    );
    expect(typescript.verdict).toBe(true);
    const python = await runCheck(
      "default.containsCode",
      { format: "py" },
      checkInput({ phase: "output", text: answer }),
    );
    expect(python).toMatchObject({ verdict: false, explanation: "The text contains no Python code, which it must." });
    // Data formats count only when asked for.
    const yaml = await runCheck(
      "default.containsCode",
      { format: "YAML" },
      checkInput({ phase: "output", text: answer }),
    );
    expect(yaml.verdict).toBe(true);
  });

  it("judges untagged and plain-text fences by what they hold", async () => {
    const code = "Run this:\n```\nimport os\nprint(os.getcwd())\n```";
    expect((await runCheck("default.containsCode", {}, checkInput({ text: code }))).data?.blocks).toEqual([
      { language: "Python", fenced: true, lines: 2 },
    ]);
    const output = "The command printed:\n```text\nAll 42 tests passed in 3.1 seconds.\n```";
    expect((await runCheck("default.containsCode", {}, checkInput({ text: output }))).verdict).toBe(false);
  });

  it("not: keeps code out of answers", async () => {
    const blocked = await runCheck(
      "default.containsCode",
      { not: true },
      checkInput({ phase: "output", text: pythonQuestion }),
    );
    expect(blocked).toMatchObject({ verdict: false });
    expect(blocked.explanation).toBe("The text contains code (1 block: Python), which it must not.");
    const allowed = await runCheck("default.containsCode", { not: true }, checkInput({ phase: "output", text: email }));
    expect(allowed.verdict).toBe(true);
  });

  it("refuses an unknown format", async () => {
    expect(await problemOf("default.containsCode", { format: "Pyhton" })).toMatchObject({
      path: "parameters.format",
      message: expect.stringContaining("unknown format 'Pyhton'"),
    });
    expect(await problemOf("default.containsCode", { format: "C#" })).toBeUndefined();
  });

  it("reads 1 MB of prose, and 1 MB of code, in reasonable time", async () => {
    for (const [text, found] of [
      [`${email}\n\n${recipe}\n\n`.repeat(1_300), false],
      [`${pythonQuestion}\n`.repeat(4_000), true],
    ] as const) {
      const started = performance.now();
      const result = await runCheck("default.containsCode", {}, checkInput({ text }));
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(result.data?.found).toBe(found);
    }
  });
});
