/**
 * The model the mock upstream answers as. Its own module so the gateway server can name it without importing
 * mock-upstream.ts: bundled into one file, that module's `import.meta.main` block would start a mock too.
 */
export const MOCK_MODEL = "gpt-4o-mini";
