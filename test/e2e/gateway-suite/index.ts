import type { E2eTarget } from "../../helpers/e2e-target.ts";
import { suiteContext } from "./context.ts";
import { describeControl } from "./control.ts";
import { describeFamilies } from "./families.ts";
import { describeFilesBatches } from "./files-batches.ts";
import { describeMcpAgents } from "./mcp-agents.ts";
import { describeProviders } from "./providers.ts";
import { describeRouting } from "./routing.ts";

/**
 * What users run is what is tested: the whole gateway as it ships, driven over HTTP by the official openai,
 * anthropic, portkey-ai, MCP and A2A SDKs against mock upstreams. Every provider family (each loads its own lazily
 * loaded chunk), streaming and not, a fallback, a saved integration, and every route family of the route table at
 * least once. It runs against each target of test/helpers/e2e-target.ts: the `npm start` bundle
 * (test/e2e/bundle.test.ts) and the whole AWS shape (test/aws-shape/e2e.test.ts), where consecutive requests land
 * on different Lambda instances.
 */
export function describeGatewaySuite(startTarget: () => Promise<E2eTarget>): void {
  const suite = suiteContext(startTarget);
  describeProviders(suite);
  describeFilesBatches(suite);
  describeRouting(suite);
  describeFamilies(suite);
  describeMcpAgents(suite);
  describeControl(suite);
}
