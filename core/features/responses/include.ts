/**
 * Values of the Responses `include` parameter: the spec's (2.1) and the ones OpenAI accepts today. A stored
 * response holds what its create asked for; reads validate `include` so that a typo is a 400, not ignored.
 */
export const RESPONSE_INCLUDE_VALUES: ReadonlySet<string> = new Set([
  "file_search_call.results",
  "message.input_image.image_url",
  "computer_call_output.output.image_url",
  "web_search_call.results",
  "web_search_call.action.sources",
  "code_interpreter_call.outputs",
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
]);
