/**
 * The globals SST 4 provides to sst.config.ts and infra/*, declared loosely (only what this repo uses) so
 * `tsc` checks infra without the SST CLI, which writes the real declarations to .sst/platform/config.d.ts.
 * SST bundles sst.config.ts without type-checking, so these never meet the real ones at deploy time.
 */

/** A value known only at deploy time (Pulumi's Output). */
interface SstOutput<T> {
  apply<U>(fn: (value: T) => U): SstOutput<U>;
}
type SstInput<T> = T | SstOutput<T>;

type SstDuration = `${number} ${"second" | "seconds" | "minute" | "minutes" | "hour" | "hours"}`;
type SstSize = `${number} ${"MB" | "GB"}`;
type SstLinkable = sst.Secret | sst.aws.Dynamo | sst.aws.Bucket | sst.aws.Queue | sst.aws.Router;

declare namespace sst {
  class Secret {
    constructor(name: string, placeholder?: string);
    readonly name: string;
    readonly value: SstOutput<string>;
  }

  namespace aws {
    interface FunctionArgs {
      handler: string;
      runtime?: "nodejs22.x" | "nodejs24.x";
      architecture?: "x86_64" | "arm64";
      nodejs?: import("./lambda-bundle.ts").LambdaNodejsOptions;
      memory?: SstSize;
      timeout?: SstDuration;
      streaming?: boolean;
      url?: boolean | { authorization?: "none" | "iam"; cors?: boolean | Record<string, unknown> };
      link?: SstLinkable[];
      /** IAM statements added to the function's role (for resources that are not SST components). */
      permissions?: Array<{ actions: string[]; resources: SstInput<string>[] }>;
      environment?: Record<string, SstInput<string>>;
      description?: string;
    }

    // biome-ignore lint/suspicious/noShadowRestrictedNames: the component's name in SST is sst.aws.Function
    class Function {
      constructor(name: string, args: FunctionArgs);
      readonly name: SstOutput<string>;
      readonly arn: SstOutput<string>;
      readonly url: SstOutput<string>;
    }

    interface RouterRouteArgs {
      readTimeout?: SstDuration;
      keepAliveTimeout?: SstDuration;
      connectionTimeout?: SstDuration;
      connectionAttempts?: number;
    }

    class Router {
      constructor(
        name: string,
        args?: {
          domain?: string | Record<string, unknown>;
          /** Code run on CloudFront's viewer request before the Router's routing (a CloudFront Function). */
          edge?: { viewerRequest?: { injection: string } };
        },
      );
      readonly url: SstOutput<string>;
      route(pattern: SstInput<string>, url: SstInput<string>, args?: RouterRouteArgs): void;
    }

    class Dynamo {
      constructor(
        name: string,
        args: {
          fields: Record<string, "string" | "number" | "binary">;
          primaryIndex: { hashKey: string; rangeKey?: string };
          globalIndexes?: Record<string, { hashKey: string; rangeKey?: string }>;
          ttl?: string;
          stream?: "keys-only" | "new-image" | "old-image" | "new-and-old-images";
        },
      );
      readonly name: SstOutput<string>;
      readonly arn: SstOutput<string>;
      /** Needs `stream`. Creates a function and an event source mapping (startingPosition LATEST by default). */
      subscribe(name: string, subscriber: string | FunctionArgs, args?: DynamoSubscriberArgs): unknown;
    }

    interface DynamoSubscriberArgs {
      /** Lambda event filter patterns (up to 5, ORed), each on the stream record's JSON shape. */
      filters?: Record<string, unknown>[];
      /** Merged into Pulumi's aws.lambda.EventSourceMappingArgs. */
      transform?: {
        eventSourceMapping?: {
          batchSize?: number;
          maximumBatchingWindowInSeconds?: number;
          functionResponseTypes?: "ReportBatchItemFailures"[];
          bisectBatchOnFunctionError?: boolean;
          maximumRetryAttempts?: number;
          maximumRecordAgeInSeconds?: number;
          parallelizationFactor?: number;
          startingPosition?: "LATEST" | "TRIM_HORIZON";
        };
      };
    }

    class Bucket {
      constructor(name: string, args?: Record<string, unknown>);
      readonly name: SstOutput<string>;
      readonly arn: SstOutput<string>;
    }

    interface QueueSubscriberArgs {
      batch?: { size?: number; window?: SstDuration; partialResponses?: boolean };
      /** Merged into Pulumi's aws.lambda.EventSourceMappingArgs. */
      transform?: { eventSourceMapping?: { scalingConfig?: { maximumConcurrency?: number } } };
    }

    /** An EventBridge rule that invokes a function on a schedule (`rate(1 minute)`, `cron(...)`). */
    class Cron {
      constructor(name: string, args: { schedule: string; function: string | FunctionArgs; enabled?: boolean });
    }

    /** A VPC (subnets in two availability zones; no NAT gateway unless asked for). */
    class Vpc {
      constructor(name: string, args?: { az?: number; nat?: "managed" | "ec2" });
      readonly id: SstOutput<string>;
    }

    /** An ECS cluster in a VPC, for sst.aws.Service. */
    class Cluster {
      constructor(name: string, args: { vpc: Vpc });
    }

    interface ServicePort {
      listen: `${number}/${"http" | "https" | "tcp"}`;
      forward?: `${number}/${"http" | "https" | "tcp"}`;
    }

    /** A Fargate service (an image built from a Dockerfile), optionally behind a public load balancer. */
    class Service {
      constructor(
        name: string,
        args: {
          cluster: Cluster;
          image: { context: string; dockerfile?: string };
          architecture?: "x86_64" | "arm64";
          cpu?: `${number} vCPU`;
          memory?: `${number} GB`;
          scaling?: { min?: number; max?: number; cpuUtilization?: number | false; memoryUtilization?: number | false };
          loadBalancer?: {
            public?: boolean;
            ports: ServicePort[];
            health?: Record<string, { path?: string; interval?: SstDuration; healthyThreshold?: number }>;
          };
          /** Merged into the underlying Pulumi resources' args (aws.lb.LoadBalancer for `loadBalancer`). */
          transform?: { loadBalancer?: { idleTimeout?: number } };
          link?: SstLinkable[];
          permissions?: Array<{ actions: string[]; resources: SstInput<string>[] }>;
          environment?: Record<string, SstInput<string>>;
        },
      );
      /** The load balancer's URL (http://...). */
      readonly url: SstOutput<string>;
    }

    /**
     * Static files uploaded to a bucket of their own (after `build.command`, from `build.output`), served by a
     * CloudFront distribution of their own or, with `router`, through that Router at `router.path`.
     */
    class StaticSite {
      constructor(
        name: string,
        args?: {
          path?: string;
          build?: { command: string; output: string };
          router?: { instance: Router; path?: string; domain?: string };
          assets?: {
            fileOptions?: Array<{
              files: string | string[];
              ignore?: string | string[];
              cacheControl?: string;
              contentType?: string;
            }>;
          };
          dev?: false;
        },
      );
      readonly url: SstOutput<string>;
    }

    class Queue {
      constructor(
        name: string,
        args?: { dlq?: string | { queue: SstInput<string>; retry: number }; visibilityTimeout?: SstDuration },
      );
      readonly url: SstOutput<string>;
      readonly arn: SstOutput<string>;
      subscribe(subscriber: string | FunctionArgs, args?: QueueSubscriberArgs): unknown;
    }
  }
}

/**
 * The Pulumi AWS provider SST bundles (global `aws` in sst.config.ts), for resources SST has no component for:
 * Amazon S3 Vectors (aws.s3.VectorsVectorBucket / aws.s3.VectorsIndex, @pulumi/aws 7.x).
 */
declare namespace aws {
  namespace s3 {
    class VectorsVectorBucket {
      constructor(name: string, args: { vectorBucketName: string; forceDestroy?: boolean });
      readonly vectorBucketName: SstOutput<string>;
      readonly vectorBucketArn: SstOutput<string>;
    }

    class VectorsIndex {
      constructor(
        name: string,
        args: {
          vectorBucketName: SstInput<string>;
          indexName: string;
          dataType: "float32";
          dimension: number;
          distanceMetric: "cosine" | "euclidean";
          metadataConfiguration?: { nonFilterableMetadataKeys: string[] };
        },
      );
      readonly indexArn: SstOutput<string>;
      readonly indexName: SstOutput<string>;
    }
  }
}

declare const $app: { name: string; stage: string; removal: "remove" | "retain" | "retain-all" };
declare function $interpolate(strings: TemplateStringsArray, ...values: unknown[]): SstOutput<string>;
declare function $jsonStringify(value: unknown): SstOutput<string>;
declare function $config<T>(config: T): T;
