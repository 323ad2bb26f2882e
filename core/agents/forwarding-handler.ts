import type { AgentCard } from "@a2a-js/sdk";
import type { RequestOptions, Transport } from "@a2a-js/sdk/client";
import { ExtendedAgentCardNotConfiguredError, PushNotificationNotSupportedError } from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import { type HttpError, upstreamTooLargeIn } from "../http/errors.ts";

type Method<K extends keyof A2ARequestHandler> = A2ARequestHandler[K];

/**
 * The A2A request handler behind the gateway's agent endpoint: every method is forwarded to the upstream agent
 * through the SDK's client transport, results and streamed events relayed as they arrive. Push notification
 * configs are refused (the upstream would call a caller-chosen URL on the gateway's behalf) and so is the
 * extended card (the gateway serves only the public one).
 */
export class ForwardingRequestHandler implements A2ARequestHandler {
  readonly #upstream: Transport;
  readonly #card: AgentCard;
  /** Per unary call: the client's signal plus a timeout. */
  readonly #unary: () => RequestOptions;
  /** Per stream: the client's signal only (streams may run long). */
  readonly #streaming: RequestOptions;
  /** How a unary call failed when the upstream's answer was too large (invocation.ts answers it with 502). */
  upstreamTooLarge: HttpError | undefined;

  constructor(upstream: Transport, card: AgentCard, signal: AbortSignal, timeoutMs: number) {
    this.#upstream = upstream;
    this.#card = card;
    // The wire version the transport speaks, as the SDK's Client announces it.
    const serviceParameters = { "A2A-Version": upstream.protocolVersion };
    this.#unary = () => ({ signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]), serviceParameters });
    this.#streaming = { signal, serviceParameters };
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.#card;
  }

  getAuthenticatedExtendedAgentCard: Method<"getAuthenticatedExtendedAgentCard"> = async () => {
    throw new ExtendedAgentCardNotConfiguredError("The gateway serves only the agent's public card.");
  };

  sendMessage: Method<"sendMessage"> = (params) => this.#noted(this.#upstream.sendMessage(params, this.#unary()));

  sendMessageStream: Method<"sendMessageStream"> = (params) =>
    this.#upstream.sendMessageStream(params, this.#streaming);

  getTask: Method<"getTask"> = (params) => this.#noted(this.#upstream.getTask(params, this.#unary()));

  listTasks: Method<"listTasks"> = (params) => this.#noted(this.#upstream.listTasks(params, this.#unary()));

  cancelTask: Method<"cancelTask"> = (params) => this.#noted(this.#upstream.cancelTask(params, this.#unary()));

  resubscribe: Method<"resubscribe"> = (params) => this.#upstream.resubscribeTask(params, this.#streaming);

  /** A unary call, noting a size refusal of the upstream's answer. */
  #noted<T>(call: Promise<T>): Promise<T> {
    return call.catch((error: unknown) => {
      this.upstreamTooLarge ??= upstreamTooLargeIn(error);
      throw error;
    });
  }

  createTaskPushNotificationConfig: Method<"createTaskPushNotificationConfig"> = async () => refusePush();
  getTaskPushNotificationConfig: Method<"getTaskPushNotificationConfig"> = async () => refusePush();
  listTaskPushNotificationConfigs: Method<"listTaskPushNotificationConfigs"> = async () => refusePush();
  deleteTaskPushNotificationConfig: Method<"deleteTaskPushNotificationConfig"> = async () => refusePush();
}

function refusePush(): never {
  throw new PushNotificationNotSupportedError("The gateway does not relay push notifications.");
}
