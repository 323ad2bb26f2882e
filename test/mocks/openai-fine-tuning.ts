import type { ServerResponse } from "node:http";
import { type RecordedRequest, sendJson } from "../helpers/mock-server.ts";
import { addProviderFile, keyOf, type OpenAIBatchesMock } from "./openai-batches.ts";

/**
 * OpenAI's fine-tuning jobs API (its API reference), for the OpenAI platform mock (`extraRoutes` of
 * test/mocks/openai-batches.ts), also under Azure OpenAI's `/openai/fine_tuning/jobs?api-version=...` and
 * `/openai/v1/fine_tuning/jobs`:
 *   POST /v1/fine_tuning/jobs                  training_file (and validation_file) must be files of the mock with
 *                                              purpose fine-tune -> a job `validating_files`
 *   GET  /v1/fine_tuning/jobs/{id}             each poll advances: validating_files -> queued -> running ->
 *                                              succeeded (after `pollsToSucceed` polls): fine_tuned_model, trained
 *                                              tokens, finished_at and a result file (CSV) set; a job whose model
 *                                              is `fail-model` fails instead, with an error
 *   POST /v1/fine_tuning/jobs/{id}/cancel      unfinished -> cancelled; finished -> 400
 *   GET  /v1/fine_tuning/jobs/{id}/events      `after` / `limit` (default 20), newest first
 *   GET  /v1/fine_tuning/jobs/{id}/checkpoints `after` / `limit` (default 10), once running
 */
export interface MockFineTuningJob {
  job: Record<string, any>;
  polls: number;
  events: Array<Record<string, any>>;
  checkpoints: Array<Record<string, any>>;
}

export interface FineTuningMockState {
  jobs: Map<string, MockFineTuningJob>;
  pollsToSucceed: number;
  /** Every create call's body, for assertions. */
  created: Array<Record<string, any>>;
}

const now = () => Math.floor(Date.now() / 1000);

function error(
  res: ServerResponse,
  status: number,
  message: string,
  param: string | null = null,
  code: string | null = null,
) {
  sendJson(res, status, { error: { message, type: "invalid_request_error", param, code } });
}

export function fineTuningRoute(state: FineTuningMockState) {
  let serial = 0;
  const event = (entry: MockFineTuningJob, message: string, type = "message") => {
    entry.events.unshift({
      object: "fine_tuning.job.event",
      id: `ftevent-${entry.job.id.slice(-6)}-${entry.events.length + 1}`,
      created_at: now(),
      level: "info",
      message,
      data: {},
      type,
    });
  };

  const advance = (entry: MockFineTuningJob, mock: OpenAIBatchesMock) => {
    const job = entry.job;
    entry.polls++;
    if (["succeeded", "failed", "cancelled"].includes(job.status)) return;
    if (job.status === "validating_files") {
      job.status = "queued";
      event(entry, "Files validated, moving job to queued state");
      return;
    }
    if (job.status === "queued") {
      job.status = "running";
      job.estimated_finish = now() + 600;
      event(entry, "Fine-tuning job started");
      entry.checkpoints.unshift({
        object: "fine_tuning.job.checkpoint",
        id: `ftckpt_${job.id.slice(-6)}_1`,
        created_at: now(),
        fine_tuned_model_checkpoint: `ft:${job.model}:mock-org::${job.id.slice(-6)}:ckpt-step-10`,
        fine_tuning_job_id: job.id,
        metrics: { step: 10, train_loss: 0.42, train_mean_token_accuracy: 0.8 },
        step_number: 10,
      });
      return;
    }
    if (entry.polls < state.pollsToSucceed) return;
    job.finished_at = now();
    job.estimated_finish = null;
    if (job.model === "fail-model") {
      job.status = "failed";
      job.error = {
        code: "invalid_training_file",
        message: "The training file has too few examples.",
        param: "training_file",
      };
      event(entry, "Fine-tuning job failed", "message");
      return;
    }
    job.status = "succeeded";
    job.trained_tokens = 5_000;
    job.fine_tuned_model = `ft:${job.model}:mock-org:${job.user_provided_suffix ?? ""}:${job.id.slice(-6)}`;
    job.result_files = [
      addProviderFile(mock.files, "fine-tune-results", "step_metrics.csv", "step,train_loss\n1,0.9\n10,0.42\n"),
    ];
    event(entry, "The job has successfully completed");
  };

  const page = (items: Array<Record<string, any>>, after: string | null, limit: number) => {
    const start = after ? items.findIndex((item) => item.id === after) + 1 : 0;
    const data = items.slice(start, start + limit);
    return { data, has_more: start + limit < items.length };
  };

  return (request: RecordedRequest, res: ServerResponse, mock: OpenAIBatchesMock): boolean => {
    const url = new URL(request.path, "http://mock");
    const match =
      /^\/(v1|openai|openai\/v1)\/fine_tuning\/jobs(?:\/([^/]+))?(\/cancel|\/events|\/checkpoints)?\/?$/.exec(
        url.pathname,
      );
    if (!match) return false;
    const azurePath = match[1] !== "v1";
    if (azurePath !== Boolean(mock.options.azure)) {
      error(res, 404, "Resource not found");
      return true;
    }
    if (keyOf(request, azurePath) !== mock.options.apiKey) {
      sendJson(res, 401, {
        error: {
          message: "Incorrect API key provided.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      });
      return true;
    }
    if (match[1] === "openai" && !url.searchParams.get("api-version")) {
      error(res, 404, "Resource not found");
      return true;
    }
    const [, , id, action] = match;
    if (!id && request.method === "POST") {
      const body = request.json();
      state.created.push(body);
      if (typeof body?.model !== "string") {
        error(res, 400, "Missing required parameter: 'model'.", "model");
        return true;
      }
      for (const param of ["training_file", "validation_file"] as const) {
        if (param === "validation_file" && body[param] == null) continue;
        const file = mock.files.files.get(body[param]);
        if (file?.purpose !== "fine-tune") {
          error(res, 400, `invalid ${param}: ${body[param]}`, param, "invalid_file");
          return true;
        }
      }
      const job = {
        object: "fine_tuning.job",
        id: `ftjob-mock${String(++serial).padStart(6, "0")}`,
        model: body.model,
        created_at: now(),
        finished_at: null,
        fine_tuned_model: null,
        organization_id: "org-mock",
        result_files: [],
        status: "validating_files",
        validation_file: body.validation_file ?? null,
        training_file: body.training_file,
        hyperparameters: {
          n_epochs: "auto",
          batch_size: "auto",
          learning_rate_multiplier: "auto",
          ...body.hyperparameters,
        },
        trained_tokens: null,
        error: null,
        user_provided_suffix: body.suffix ?? null,
        seed: body.seed ?? 42,
        estimated_finish: null,
        integrations: body.integrations ?? [],
        metadata: body.metadata ?? null,
        method: body.method ?? { type: "supervised", supervised: { hyperparameters: {} } },
      };
      const entry: MockFineTuningJob = { job, polls: 0, events: [], checkpoints: [] };
      event(entry, `Created fine-tuning job: ${job.id}`);
      state.jobs.set(job.id, entry);
      sendJson(res, 200, job);
      return true;
    }
    const entry = id ? state.jobs.get(decodeURIComponent(id)) : undefined;
    if (!entry) {
      error(res, 404, `Could not find fine-tune job: ${id}`, "fine_tune_id", "fine_tune_not_found");
      return true;
    }
    const limit = Number(url.searchParams.get("limit") ?? (action === "/checkpoints" ? 10 : 20));
    const after = url.searchParams.get("after");
    if (request.method === "GET" && !action) {
      advance(entry, mock);
      sendJson(res, 200, entry.job);
    } else if (request.method === "POST" && action === "/cancel") {
      if (["succeeded", "failed", "cancelled"].includes(entry.job.status)) {
        error(res, 400, `Cannot cancel a job with status ${entry.job.status}.`);
      } else {
        entry.job.status = "cancelled";
        entry.job.estimated_finish = null;
        event(entry, "Fine-tuning job cancelled");
        sendJson(res, 200, entry.job);
      }
    } else if (request.method === "GET" && action === "/events") {
      sendJson(res, 200, { object: "list", ...page(entry.events, after, limit) });
    } else if (request.method === "GET" && action === "/checkpoints") {
      const { data, has_more } = page(entry.checkpoints, after, limit);
      sendJson(res, 200, {
        object: "list",
        data,
        has_more,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
      });
    } else {
      error(res, 405, "Method not allowed");
    }
    return true;
  };
}

/** A fresh fine-tuning state to plug into the platform mock: `extraRoutes: [fineTuningRoute(state)]`. */
export function fineTuningState(pollsToSucceed = 3): FineTuningMockState {
  return { jobs: new Map(), pollsToSucceed, created: [] };
}
