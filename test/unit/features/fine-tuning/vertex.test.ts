import { describe, expect, it } from "vitest";
import { jobOf } from "../../../../core/features/fine-tuning/providers/vertex.ts";

describe("Vertex AI tuning jobs in OpenAI's shape", () => {
  const name = "projects/p/locations/us-central1/tuningJobs/123";

  it("maps every JOB_STATE_* to a fine-tuning status", () => {
    const cases: Array<[string, string]> = [
      ["JOB_STATE_PENDING", "validating_files"],
      ["JOB_STATE_QUEUED", "queued"],
      ["JOB_STATE_RUNNING", "running"],
      ["JOB_STATE_CANCELLING", "running"],
      ["JOB_STATE_SUCCEEDED", "succeeded"],
      ["JOB_STATE_FAILED", "failed"],
      ["JOB_STATE_EXPIRED", "failed"],
      ["JOB_STATE_CANCELLED", "cancelled"],
    ];
    for (const [state, status] of cases) expect(jobOf({ name, state }).status, state).toBe(status);
  });

  it("names the tuned model only once succeeded, and carries the error, end time and hyperparameters", () => {
    const tunedModel = { model: "projects/p/locations/us-central1/models/9@1", endpoint: "x" };
    expect(jobOf({ name, state: "JOB_STATE_RUNNING", tunedModel }).fine_tuned_model).toBeNull();
    const done = jobOf({
      name,
      state: "JOB_STATE_SUCCEEDED",
      tunedModel,
      endTime: "2025-01-01T00:00:10Z",
      supervisedTuningSpec: { hyperParameters: { epochCount: "3", learningRateMultiplier: 0.5 } },
    });
    expect(done).toMatchObject({
      id: "123",
      fine_tuned_model: tunedModel.model,
      finished_at: 1735689610,
      hyperparameters: { n_epochs: 3, learning_rate_multiplier: 0.5 },
      error: null,
    });
    const failed = jobOf({ name, state: "JOB_STATE_FAILED", error: { code: 3, message: "bad data" } });
    expect(failed.error).toEqual({ code: "vertex_3", message: "bad data", param: null });
    expect(() => jobOf({ state: "JOB_STATE_RUNNING" })).toThrow();
    expect(() => jobOf({ name: "projects/p/tuningJobs/a%2Fb" })).toThrow();
  });
});
