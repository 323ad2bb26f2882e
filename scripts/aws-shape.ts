import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAwsShape } from "../test/aws-shape/shape.ts";

/**
 * `npm run aws-shape`: the whole AWS shape on this machine (test/aws-shape/shape.ts; docs/deploying-aws.md, "The
 * local AWS shape"), on emulators it starts itself, until Ctrl-C. Prints the Router's URL, the admin key and where
 * the Router's self-signed certificate is, then every function's and the service's log lines as they come.
 *   --quiet            do not echo the logs
 *   --instances=N      instances per function requests go round (default 2)
 *   --recycle-after=N  recycle an instance after about N invocations (default 20; 0: never)
 *   --trust=HOSTS      TRUSTED_CUSTOM_HOSTS of every function (e.g. 127.0.0.1 for upstreams on this machine)
 */

const flags = new Map(
  process.argv.slice(2).map((argument) => {
    const [name, value = "true"] = argument.replace(/^--/, "").split("=");
    return [name!, value];
  }),
);
const number = (name: string) => (flags.has(name) ? Number(flags.get(name)) : undefined);

const started = performance.now();
const shape = await startAwsShape({
  echo: !flags.has("quiet"),
  instances: number("instances"),
  recycleAfter: number("recycle-after"),
  environment: flags.has("trust") ? { TRUSTED_CUSTOM_HOSTS: flags.get("trust")! } : {},
});
const certificate = join(tmpdir(), "aws-shape-router.pem");
writeFileSync(certificate, shape.certificate);
console.log(`
The AWS shape is up (${Math.round(performance.now() - started)} ms): ${shape.functions.size} functions, ${shape.definition.routes.length} routes.
  URL          ${shape.url}
  admin key    ${shape.adminKey}
  certificate  ${certificate}   (curl --cacert it; NODE_EXTRA_CA_CERTS=${certificate} for Node clients)

  curl --cacert ${certificate} ${shape.url}/v1/models -H "x-gateway-api-key: ${shape.adminKey}"
`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.log("stopping the AWS shape...");
    shape.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
