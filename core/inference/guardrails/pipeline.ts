import type { InferenceOutcome } from "../gateway/outcome.ts";
import type { RequestContext } from "../../services.ts";
import type { RouteKind } from "../../providers/types.ts";
import type { InheritedSettings } from "../routing/config.ts";
import type { GuardrailPhases, InputResult } from "./phases.ts";
import { guardrailsFor, mayHaveGuardrails } from "./resolve.ts";
import type { GuardrailDefinition } from "./types.ts";

/**
 * Pipeline steps 4 and 7 for an inference request (core/inference/gateway/inference.ts): input guardrails on the body
 * about to be sent to a target, output guardrails on the answer. A request without guardrails costs one cached
 * lookup of its organisation's defaults per step; the runner, the checks and the phases (phases.ts) are loaded
 * on the first request that has some.
 */

let engine:
  | Promise<[typeof import("./phases.ts"), typeof import("./check-environment.ts"), typeof import("./spans.ts")]>
  | undefined;

function loadEngine() {
  engine ??= Promise.all([import("./phases.ts"), import("./check-environment.ts"), import("./spans.ts")]);
  return engine;
}

interface PhaseDefinitions {
  input: GuardrailDefinition[];
  output: GuardrailDefinition[];
}

export class InferenceGuardrails {
  readonly #route: RouteKind;
  readonly #request: Request;
  readonly #ctx: RequestContext;
  readonly #outcome: InferenceOutcome & { finish(): void };
  readonly #requestId: string;
  #phases?: GuardrailPhases;
  /** The body last sent upstream (as the input phase left it): what output checks see as the request. */
  #sent?: Record<string, any>;
  /** Both phases' guardrails per target's settings, resolved once (a bad reference fails before any call). */
  #definitions?: Map<InheritedSettings, Promise<PhaseDefinitions>>;
  /** Whether the last settings asked about may have guardrails (the output step asks about the same target). */
  #may?: { settings: InheritedSettings; answer: Promise<boolean> };

  constructor(
    route: RouteKind,
    request: Request,
    ctx: RequestContext,
    outcome: InferenceOutcome & { finish(): void },
    requestId: string,
  ) {
    this.#route = route;
    this.#request = request;
    this.#ctx = ctx;
    this.#outcome = outcome;
    this.#requestId = requestId;
  }

  /** Input guardrails of a target: the body to send it (redacted, or as it was), or the denial to answer. */
  async input(settings: InheritedSettings, body: Record<string, any>): Promise<InputResult> {
    this.#sent = body;
    if (!this.#phases && !(await this.#mayHave(settings))) return { body };
    const [phases, definitions] = await Promise.all([this.#load(), this.#definitionsOf(settings)]);
    const result = await phases.input(definitions.input, body);
    if (result.body) this.#sent = result.body;
    return result;
  }

  /** Output guardrails of the target that answered, on its answer (a denial answers instead). */
  async output(settings: InheritedSettings, response: Response): Promise<Response> {
    if (!this.#phases && !(await this.#mayHave(settings))) return response;
    const [phases, definitions] = await Promise.all([this.#load(), this.#definitionsOf(settings)]);
    return phases.output(definitions.output, response, this.#sent ?? {});
  }

  #mayHave(settings: InheritedSettings): Promise<boolean> {
    if (this.#may?.settings !== settings) this.#may = { settings, answer: mayHaveGuardrails(this.#ctx, settings) };
    return this.#may.answer;
  }

  async #load(): Promise<GuardrailPhases> {
    if (this.#phases) return this.#phases;
    const [{ GuardrailPhases }, { checkEnvironment }, { recordGuardrailSpans }] = await loadEngine();
    const ctx = this.#ctx;
    const spans = {
      traceId: ctx.traceId,
      organisationId: ctx.principal?.organisationId ?? "",
      workspaceId: ctx.principal?.workspaceId,
      settings: ctx.services.settings,
    };
    this.#phases ??= new GuardrailPhases({
      route: this.#route,
      request: this.#request,
      ctx: this.#ctx,
      outcome: this.#outcome,
      requestId: this.#requestId,
      env: checkEnvironment(this.#request, ctx),
      onVerdicts: (verdicts) => recordGuardrailSpans(verdicts, spans),
    });
    return this.#phases;
  }

  #definitionsOf(settings: InheritedSettings): Promise<PhaseDefinitions> {
    this.#definitions ??= new Map();
    let definitions = this.#definitions.get(settings);
    if (!definitions) {
      definitions = Promise.all([
        guardrailsFor(this.#ctx, settings, "input"),
        guardrailsFor(this.#ctx, settings, "output"),
      ]).then(([input, output]) => ({ input, output }));
      this.#definitions.set(settings, definitions);
    }
    return definitions;
  }
}
