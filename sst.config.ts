/**
 * The AWS deployment (SST 4). `npx sst@4 deploy --stage prod`; see docs/deploying-aws.md.
 * Resources live in infra/, one concern a file; everything per route family is derived from the route table.
 */

/** Stages whose data outlives `sst remove` (and whose resources SST refuses to delete). */
const PRODUCTION_STAGES = ["prod", "production"];

export default $config({
  app(input?: { stage?: string }) {
    const production = PRODUCTION_STAGES.includes(input?.stage ?? "");
    return {
      name: "ai-gateway",
      home: "aws" as const,
      removal: production ? ("retain" as const) : ("remove" as const),
      protect: production,
    };
  },
  async run() {
    await import("./infra/storage.ts");
    await import("./infra/vectors.ts");
    await import("./infra/secrets.ts");
    const { router } = await import("./infra/api.ts");
    await import("./infra/workers.ts");
    // The web console's static files, from a bucket behind the same Router (infra/console.ts).
    await import("./infra/console.ts");
    // The realtime WebSocket proxy: a container service running all the time (docs/deploying-aws.md says what it
    // costs). GATEWAY_REALTIME_SERVICE=off at deploy time leaves it out.
    if (process.env.GATEWAY_REALTIME_SERVICE !== "off") await import("./infra/realtime.ts");
    return { url: router.url };
  },
});
