/**
 * A self-hosted gateway reporting itself to its control plane (issue 28): when GATEWAY_CONTROL_PLANE_URL and
 * GATEWAY_DEPLOYMENT_KEY are set, it posts `POST /v1/deployments/self/heartbeat` at once and then every
 * GATEWAY_DEPLOYMENT_HEARTBEAT_SECONDS, with its version, health and URL. The timer is unref'd (it never keeps
 * the process alive); a failed beat is reported on stderr without the key and retried at the next tick.
 */
export interface DeploymentHeartbeatOptions {
  controlPlaneUrl: string;
  deploymentKey: string;
  intervalSeconds: number;
  version: string;
  /** Where this gateway answers (its public URL), when known. */
  url?: () => string | undefined;
  fetch?: typeof fetch;
}

export interface DeploymentHeartbeat {
  /** Sends one heartbeat now; true when the control plane accepted it. */
  beat(): Promise<boolean>;
  stop(): void;
}

const BEAT_TIMEOUT_MS = 10_000;

export function startDeploymentHeartbeat(options: DeploymentHeartbeatOptions): DeploymentHeartbeat {
  const send = options.fetch ?? fetch;
  const endpoint = `${options.controlPlaneUrl.replace(/\/+$/, "").replace(/\/v1$/, "")}/v1/deployments/self/heartbeat`;
  let inFlight: Promise<boolean> | undefined;
  const beat = () => {
    // One beat at a time: a slow control plane does not pile up requests.
    inFlight ??= (async () => {
      try {
        const url = options.url?.();
        const response = await send(endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", "x-gateway-api-key": options.deploymentKey },
          body: JSON.stringify({
            version: options.version,
            status: "healthy",
            heartbeat_interval_seconds: options.intervalSeconds,
            ...(url ? { url } : {}),
          }),
          signal: AbortSignal.timeout(BEAT_TIMEOUT_MS),
        });
        await response.body?.cancel();
        if (!response.ok) console.error(`deployment heartbeat refused by the control plane: HTTP ${response.status}`);
        return response.ok;
      } catch (error) {
        console.error(`deployment heartbeat failed: ${(error as Error).name}`);
        return false;
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  };
  void beat();
  const timer = setInterval(() => void beat(), options.intervalSeconds * 1000);
  timer.unref();
  return { beat, stop: () => clearInterval(timer) };
}
