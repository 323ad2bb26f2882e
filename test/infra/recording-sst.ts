/**
 * A recording stand-in for the SST globals (`sst.aws.*`, `sst.Secret`, `$app`, `$interpolate`,
 * `$jsonStringify`, `$config`) and the Pulumi AWS resources infra uses (`aws.s3.VectorsVectorBucket`,
 * `aws.s3.VectorsIndex`): evaluating sst.config.ts / infra/* against it records every component and
 * its arguments instead of deploying. Deploy-time values (Pulumi Outputs) are plain placeholder strings.
 * It enforces the rules of the real components that infra code could break (unique names, one subscriber
 * per queue, route patterns starting with `/`) and models the Router's matching for the tests.
 */

export interface RecordedComponent {
  type:
    | "Function"
    | "Router"
    | "Dynamo"
    | "Bucket"
    | "Queue"
    | "Secret"
    | "VectorBucket"
    | "VectorIndex"
    | "Cron"
    | "Vpc"
    | "Cluster"
    | "Service"
    | "StaticSite";
  name: string;
  args: any;
  instance: any;
}

export interface RecordedRoute {
  router: string;
  pattern: string;
  url: string;
  args: any;
}

export interface RecordedSubscription {
  queue: string;
  subscriber: any;
  args: any;
}

/** A subscriber of a table's DynamoDB stream (sst.aws.Dynamo.subscribe). */
export interface RecordedStreamSubscription {
  table: string;
  name: string;
  subscriber: any;
  args: any;
}

export class Recording {
  readonly components: RecordedComponent[] = [];
  readonly routes: RecordedRoute[] = [];
  /** Queue subscriptions. */
  readonly subscriptions: RecordedSubscription[] = [];
  readonly streamSubscriptions: RecordedStreamSubscription[] = [];

  of(type: RecordedComponent["type"]): RecordedComponent[] {
    return this.components.filter((component) => component.type === type);
  }

  named(type: RecordedComponent["type"], name: string): RecordedComponent {
    const found = this.components.find((component) => component.type === type && component.name === name);
    if (!found) throw new Error(`no ${type} named ${name} was created`);
    return found;
  }

  /** The component a linked value or URL belongs to. */
  functionByUrl(url: string): RecordedComponent | undefined {
    return this.of("Function").find((fn) => fn.instance.url === url);
  }

  /**
   * sst.aws.Router's matching (its CloudFront Function, SST 3.10+/4): the route whose pattern is the longest
   * prefix of the path, where the path equals the pattern or continues it with `/`. Returns the URL routed to.
   */
  routeRequest(path: string): string | undefined {
    let best: RecordedRoute | undefined;
    for (const route of this.routes) {
      const prefix = route.pattern;
      const matches =
        path.startsWith(prefix) &&
        (path === prefix || prefix.endsWith("/") || path[prefix.length] === "/" || prefix === "/");
      if (matches && (!best || prefix.length > best.pattern.length)) best = route;
    }
    return best?.url;
  }
}

/** Stages whose resources SST retains (sst.config.ts: production stages). */
const RETAINED_STAGES = ["prod", "production"];

export function installRecordingSst(stage = "test"): Recording {
  const recording = new Recording();

  const register = (type: RecordedComponent["type"], name: string, args: any, instance: any) => {
    if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new Error(`${type} name '${name}' is not a PascalCase identifier`);
    if (recording.components.some((component) => component.type === type && component.name === name)) {
      throw new Error(`a ${type} named '${name}' already exists: component names must be unique`);
    }
    recording.components.push({ type, name, args, instance });
  };

  class Secret {
    readonly name: string;
    readonly value: string;
    constructor(name: string) {
      this.name = name;
      this.value = `<secret ${name}>`;
      register("Secret", name, {}, this);
    }
  }

  class LambdaFunction {
    readonly name: string;
    readonly arn: string;
    readonly url: string;
    constructor(name: string, args: any) {
      if (!args?.handler) throw new Error(`Function ${name} needs a handler`);
      this.name = `<${name}.name>`;
      this.arn = `arn:aws:lambda:us-east-1:123456789012:function:${name}`;
      this.url = `https://${name.toLowerCase()}.lambda-url.us-east-1.on.aws/`;
      register("Function", name, args, this);
    }
  }

  class Router {
    readonly name: string;
    readonly url: string;
    constructor(name: string, args: any = {}) {
      this.name = name;
      this.url = `https://${name.toLowerCase()}.cloudfront.net`;
      register("Router", name, args, this);
    }
    route(pattern: string, url: string, args: any = {}) {
      if (!pattern.startsWith("/")) throw new Error(`route pattern '${pattern}' must start with '/'`);
      if (recording.routes.some((route) => route.router === this.name && route.pattern === pattern)) {
        throw new Error(`route '${pattern}' is added twice to router ${this.name}`);
      }
      if (url === undefined) throw new Error(`route '${pattern}' has no destination URL`);
      new URL(url); // a destination must be a URL
      recording.routes.push({ router: this.name, pattern, url, args });
    }
  }

  class Dynamo {
    readonly componentName: string;
    readonly name: string;
    readonly arn: string;
    readonly #stream: unknown;
    constructor(name: string, args: any) {
      this.componentName = name;
      this.name = `<${name}.name>`;
      this.arn = `arn:aws:dynamodb:us-east-1:123456789012:table/${name}`;
      this.#stream = args?.stream;
      register("Dynamo", name, args, this);
    }
    subscribe(name: string, subscriber: any, args: any = {}) {
      // As in SST: a table's stream must be enabled to subscribe, and subscriber names are unique per table.
      if (!this.#stream) throw new Error(`Cannot subscribe to "${this.componentName}" because stream is not enabled.`);
      const handler = typeof subscriber === "string" ? subscriber : subscriber?.handler;
      if (typeof name !== "string" || !handler) {
        throw new Error(`subscribe(name, subscriber, args): a subscriber of ${this.componentName} needs a handler`);
      }
      if (!/^[A-Z][A-Za-z0-9]*$/.test(name))
        throw new Error(`subscriber name '${name}' is not a PascalCase identifier`);
      if (recording.streamSubscriptions.some((entry) => entry.table === this.componentName && entry.name === name)) {
        throw new Error(`${this.componentName} already has a subscriber named '${name}'`);
      }
      recording.streamSubscriptions.push({ table: this.componentName, name, subscriber, args });
    }
  }

  class Bucket {
    readonly name: string;
    readonly arn: string;
    constructor(name: string, args: any = {}) {
      this.name = `<${name}.name>`;
      this.arn = `arn:aws:s3:::${name.toLowerCase()}`;
      register("Bucket", name, args, this);
    }
  }

  /**
   * As sst.aws.StaticSite: uploads `path` (or `build.output` after `build.command`) to a bucket of its own; with
   * `router`, served through that Router at `router.path` (default `/`) instead of a distribution of its own.
   */
  class StaticSite {
    readonly url: string;
    constructor(name: string, args: any = {}) {
      if (args.build && (!args.build.command || !args.build.output)) {
        throw new Error(`StaticSite ${name}: build needs a command and an output`);
      }
      this.url = `https://${name.toLowerCase()}-assets.s3.us-east-1.amazonaws.com/`;
      register("StaticSite", name, args, this);
      const target = args.router;
      if (target) {
        if (!(target.instance instanceof Router))
          throw new Error(`StaticSite ${name}: router.instance is not a Router`);
        target.instance.route(target.path ?? "/", this.url);
      }
    }
  }

  class Queue {
    readonly componentName: string;
    readonly url: string;
    readonly arn: string;
    #subscribed = false;
    constructor(name: string, args: any = {}) {
      this.componentName = name;
      this.url = `https://sqs.us-east-1.amazonaws.com/123456789012/${name}`;
      this.arn = `arn:aws:sqs:us-east-1:123456789012:${name}`;
      register("Queue", name, args, this);
    }
    subscribe(subscriber: any, args: any = {}) {
      // As in SST: an SQS queue can have only one subscriber.
      if (this.#subscribed) throw new Error(`queue ${this.componentName} is subscribed twice`);
      this.#subscribed = true;
      recording.subscriptions.push({ queue: this.componentName, subscriber, args });
    }
  }

  /** As sst.aws.Cron: a rate or cron schedule (EventBridge's syntax) and a function to run. */
  class Cron {
    constructor(name: string, args: any) {
      if (!/^(rate\(\d+ (minute|minutes|hour|hours|day|days)\)|cron\(.+\))$/.test(args?.schedule ?? ""))
        throw new Error(`Cron ${name}: schedule '${args?.schedule}' is not a rate(...) or cron(...) expression`);
      const handler = typeof args.function === "string" ? args.function : args.function?.handler;
      if (!handler) throw new Error(`Cron ${name} needs a function with a handler`);
      register("Cron", name, args, this);
    }
  }

  class Vpc {
    readonly id: string;
    constructor(name: string, args: any = {}) {
      this.id = `<${name}.id>`;
      register("Vpc", name, args, this);
    }
  }

  /** As sst.aws.Cluster: in a VPC made by sst.aws.Vpc. */
  class Cluster {
    constructor(name: string, args: any) {
      if (!(args?.vpc instanceof Vpc)) throw new Error(`Cluster ${name} needs a vpc (an sst.aws.Vpc)`);
      register("Cluster", name, args, this);
    }
  }

  /**
   * As sst.aws.Service: in a Cluster, from an image (a build context and Dockerfile), and with a URL only when it
   * has a load balancer; load balancer ports are `<port>/<protocol>` and health checks name a forwarded port.
   */
  class Service {
    readonly url: string | undefined;
    constructor(name: string, args: any) {
      if (!(args?.cluster instanceof Cluster)) throw new Error(`Service ${name} needs a cluster (an sst.aws.Cluster)`);
      if (typeof args.image?.context !== "string")
        throw new Error(`Service ${name} needs an image with a build context`);
      const portPattern = /^\d+\/(http|https|tcp|udp)$/;
      const ports: any[] = args.loadBalancer?.ports ?? [];
      for (const port of ports) {
        if (!portPattern.test(port.listen) || (port.forward !== undefined && !portPattern.test(port.forward)))
          throw new Error(`Service ${name}: load balancer port ${JSON.stringify(port)} is not '<port>/<protocol>'`);
      }
      const forwarded = new Set(ports.map((port) => port.forward ?? port.listen));
      for (const target of Object.keys(args.loadBalancer?.health ?? {})) {
        if (!forwarded.has(target))
          throw new Error(`Service ${name}: health check on ${target}, which no port forwards to`);
      }
      this.url = args.loadBalancer ? `http://${name.toLowerCase()}-lb.us-east-1.elb.amazonaws.com` : undefined;
      register("Service", name, args, this);
    }
  }

  /** As S3 Vectors and the provider check them: names, and indexes' float32 / 1..4096 / metric. */
  class VectorsVectorBucket {
    readonly vectorBucketName: string;
    readonly vectorBucketArn: string;
    constructor(name: string, args: any) {
      if (!/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(args?.vectorBucketName ?? ""))
        throw new Error(
          `vector bucket name '${args?.vectorBucketName}' is not 3..63 lowercase letters, digits, hyphens`,
        );
      this.vectorBucketName = args.vectorBucketName;
      this.vectorBucketArn = `arn:aws:s3vectors:us-east-1:123456789012:bucket/${args.vectorBucketName}`;
      register("VectorBucket", name, args, this);
    }
  }

  class VectorsIndex {
    readonly indexName: string;
    readonly indexArn: string;
    constructor(name: string, args: any) {
      const bucket = recording.of("VectorBucket").find((b) => b.instance.vectorBucketName === args?.vectorBucketName);
      if (!bucket) throw new Error(`index ${name} names no vector bucket created before it`);
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(args.indexName ?? ""))
        throw new Error(`index name '${args.indexName}' is not 3..63 lowercase letters, digits, hyphens, dots`);
      if (args.dataType !== "float32") throw new Error(`index ${name}: dataType must be float32`);
      if (!Number.isInteger(args.dimension) || args.dimension < 1 || args.dimension > 4096)
        throw new Error(`index ${name}: dimension must be an integer 1..4096`);
      if (!["cosine", "euclidean"].includes(args.distanceMetric)) throw new Error(`index ${name}: bad distanceMetric`);
      const taken = recording
        .of("VectorIndex")
        .some(
          (index) => index.args.vectorBucketName === args.vectorBucketName && index.args.indexName === args.indexName,
        );
      if (taken) throw new Error(`index name '${args.indexName}' is used twice in one vector bucket`);
      this.indexName = args.indexName;
      this.indexArn = `${bucket.instance.vectorBucketArn}/index/${args.indexName}`;
      register("VectorIndex", name, args, this);
    }
  }

  Object.assign(globalThis, {
    sst: {
      Secret,
      aws: {
        Function: LambdaFunction,
        Router,
        Dynamo,
        Bucket,
        Queue,
        Cron,
        Vpc,
        Cluster,
        Service,
        StaticSite,
      },
    },
    aws: { s3: { VectorsVectorBucket, VectorsIndex } },
    $app: { name: "ai-gateway", stage, removal: RETAINED_STAGES.includes(stage) ? "retain" : "remove" },
    $interpolate: (strings: TemplateStringsArray, ...values: unknown[]) => String.raw(strings, ...values),
    $jsonStringify: (value: unknown) => JSON.stringify(value),
    $config: <T>(config: T) => config,
  });
  return recording;
}
