import { startRealtimeService } from "../../core/platform/aws/realtime-service.ts";

/**
 * Entry point of the realtime container service (services/realtime/Dockerfile, infra/realtime.ts). ECS stops a
 * task with SIGTERM: sessions are closed (1001) and their logs written before the process exits.
 */
const service = await startRealtimeService();
console.log(`realtime service listening on ${service.url}`);
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    service.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
