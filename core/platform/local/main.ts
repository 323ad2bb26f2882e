import { startLocalGateway } from "./gateway.ts";

/** `npm start`: the gateway as one Node process with embedded storage. */
const gateway = await startLocalGateway();

const { settings } = gateway.services;
const where = settings.GATEWAY_STORE === "mysql" ? "state in MySQL" : `data in ${settings.GATEWAY_DATA_DIR}`;
console.log(`AI gateway listening on ${gateway.url}/v1 (${where})`);
if (gateway.bootstrap.adminApiKey) {
  console.log(
    [
      "",
      "Created the organisation, its default workspace and an organisation admin API key.",
      "This key is shown ONCE and stored only as a hash; keep it somewhere safe:",
      "",
      `  ${gateway.bootstrap.adminApiKey}`,
      "",
      "Send it as the x-gateway-api-key header.",
      "",
    ].join("\n"),
  );
}

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    console.log(`${signal}: finishing in-flight requests...`);
    gateway.close().then(
      () => process.exit(0),
      (error) => {
        console.error("shutdown failed", error);
        process.exit(1);
      },
    );
  });
}
