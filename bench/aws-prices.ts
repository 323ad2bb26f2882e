/**
 * Public AWS list prices used by the cost estimate (bench/aws-cost.ts): US East (N. Virginia), on-demand,
 * first pricing tier, no free tier, no savings plans. Update the numbers AND `checked` together.
 *
 * checked: 2026-11-22, from the pages under `source` (as quoted by the pricing pages and by AWS's own
 * announcements: Lambda arm64/x86 prices unchanged since Graviton2 support in 2021; DynamoDB on-demand
 * throughput prices halved effective 2024-11-01; Lambda INIT phase billed for managed runtimes since
 * 2025-08-01).
 */
export const AWS_PRICES = {
  region: "us-east-1",
  checked: "2026-11-22",
  lambda: {
    source: "https://aws.amazon.com/lambda/pricing/",
    /** USD per GB-second, first tier (arm64: first 7.5 billion GB-s/month; x86: first 6 billion). */
    gbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
    /** USD per request (0.20 per million), both architectures. */
    request: 0.2 / 1_000_000,
    /** Duration is billed per 1 ms, rounded up. */
    billingGranularityMs: 1,
    /** Since 2025-08-01 the INIT phase (cold start) of ZIP functions on managed runtimes is billed as duration. */
    initBilled: true,
    initBillingSource: "https://aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase/",
    /** Response streaming: first 6 MB per request free, then per GB (our answers are far below 6 MB). */
    streamedGbBeyond6Mb: 0.008,
  },
  dynamodb: {
    source: "https://aws.amazon.com/dynamodb/pricing/on-demand/",
    /** USD per write request unit (1 KB written; 0.625 per million since 2024-11-01). */
    writeRequestUnit: 0.625 / 1_000_000,
    /** USD per read request unit (one strongly consistent read of up to 4 KB; 0.125 per million). */
    readRequestUnit: 0.125 / 1_000_000,
  },
  s3: {
    source: "https://aws.amazon.com/s3/pricing/",
    /** S3 Standard: PUT, COPY, POST, LIST requests, USD per request (0.005 per 1,000). */
    put: 0.005 / 1_000,
    /** GET, SELECT and all other requests (0.0004 per 1,000). */
    get: 0.0004 / 1_000,
  },
  sqs: {
    source: "https://aws.amazon.com/sqs/pricing/",
    /** Standard queue, per request (64 KB chunk), first tier: 0.40 per million. */
    request: 0.4 / 1_000_000,
  },
  cloudfront: {
    source: "https://aws.amazon.com/cloudfront/pricing/",
    /** The Router (CloudFront) in front of the functions: HTTPS requests, US/Europe, 0.0100 per 10,000. */
    httpsRequest: 0.01 / 10_000,
  },
} as const;
