/**
 * Names of code languages for `default.containsCode`: a fence's tag (```py) or a `format` parameter (Portkey's
 * names: `Python`, `C#`...) mapped to one name per language. Data and prose formats (JSON, YAML, Markdown, plain
 * text...) are not code: a fenced block of them counts only when `format` asks for that format.
 */

const LANGUAGES: Record<string, readonly string[]> = {
  SQL: ["sql", "mysql", "postgresql", "psql", "plsql", "sqlite", "tsql"],
  Python: ["python", "py", "python3", "py3", "gyp", "ipython"],
  TypeScript: ["typescript", "ts", "tsx", "mts", "cts"],
  JavaScript: ["javascript", "js", "jsx", "mjs", "cjs", "node"],
  Java: ["java"],
  "C#": ["c#", "cs", "csharp"],
  "C++": ["c++", "cpp", "cc", "cxx", "hpp", "hxx"],
  C: ["c", "h"],
  Ruby: ["ruby", "rb"],
  PHP: ["php"],
  Swift: ["swift"],
  Kotlin: ["kotlin", "kt", "kts"],
  Go: ["go", "golang"],
  Rust: ["rust", "rs"],
  Scala: ["scala"],
  R: ["r"],
  Perl: ["perl", "pl"],
  Shell: ["shell", "sh", "bash", "zsh", "fish", "console", "shellscript", "shell-session"],
  PowerShell: ["powershell", "ps1", "pwsh"],
  HTML: ["html", "htm", "xhtml", "vue", "svelte"],
  CSS: ["css", "scss", "sass", "less"],
  Dockerfile: ["dockerfile", "docker"],
  Lua: ["lua"],
  Haskell: ["haskell", "hs"],
  Elixir: ["elixir", "ex", "exs"],
  Dart: ["dart"],
  "Objective-C": ["objective-c", "objc", "objectivec"],
  Julia: ["julia", "jl"],
  Clojure: ["clojure", "clj"],
  GraphQL: ["graphql", "gql"],
  HCL: ["hcl", "terraform", "tf"],
  Solidity: ["solidity", "sol"],
  Zig: ["zig"],
  // Data and prose: never code on their own.
  JSON: ["json", "jsonc", "json5"],
  YAML: ["yaml", "yml"],
  XML: ["xml"],
  TOML: ["toml"],
  CSV: ["csv", "tsv"],
  Markdown: ["markdown", "md"],
  Text: ["text", "txt", "plaintext", "plain", "output", "log", "none"],
};

export const NOT_CODE = new Set(["JSON", "YAML", "XML", "TOML", "CSV", "Markdown", "Text"]);

const byTag = new Map<string, string>();
for (const [name, tags] of Object.entries(LANGUAGES)) {
  byTag.set(name.toLowerCase(), name);
  for (const tag of tags) byTag.set(tag, name);
}

/** The language a fence tag or `format` names (case ignored), or undefined when unknown. */
export const languageNamed = (tag: string): string | undefined => byTag.get(tag.toLowerCase());

export const languageNames = (): string[] => Object.keys(LANGUAGES);
