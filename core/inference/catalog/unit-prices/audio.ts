import type { UnitPrice } from "./types.ts";

const PER_MINUTE = 1 / 60;
const PER_HOUR = 1 / 3600;
const PER_MILLION = 1 / 1_000_000;
const PER_THOUSAND = 1 / 1000;

/**
 * Audio: transcription and translation by the second of input audio, speech by the character of input text.
 * Figures from each provider's public pricing page (pay as you go) when these rows were written.
 */
export const AUDIO_PRICES: readonly UnitPrice[] = [
  // https://openai.com/api/pricing: Whisper $0.006 a minute; TTS $15 and TTS HD $30 per million characters;
  // gpt-4o-transcribe and gpt-4o-mini-transcribe are billed by tokens, estimated there at $0.006 and $0.003 a
  // minute (the estimate is used: the catalog's text-token prices are not its audio-token prices).
  { providers: ["openai", "azure-openai"], model: /^whisper-1$/, perSecond: 0.006 * PER_MINUTE },
  {
    providers: ["openai", "azure-openai"],
    model: /^gpt-4o-transcribe(-\d{4}-\d{2}-\d{2})?$/,
    perSecond: 0.006 * PER_MINUTE,
  },
  {
    providers: ["openai", "azure-openai"],
    model: /^gpt-4o-mini-transcribe(-\d{4}-\d{2}-\d{2})?$/,
    perSecond: 0.003 * PER_MINUTE,
  },
  { providers: ["openai", "azure-openai"], model: /^tts-1$/, perCharacter: 15 * PER_MILLION },
  { providers: ["openai", "azure-openai"], model: /^tts-1-hd$/, perCharacter: 30 * PER_MILLION },

  // https://groq.com/pricing: Whisper Large v3 $0.111, Large v3 Turbo $0.04, Distil-Whisper $0.02 per hour
  // of audio (Groq bills at least 10 seconds a request; the gateway prices the audio's own length).
  { providers: ["groq"], model: /^whisper-large-v3$/, perSecond: 0.111 * PER_HOUR },
  { providers: ["groq"], model: /^whisper-large-v3-turbo$/, perSecond: 0.04 * PER_HOUR },
  { providers: ["groq"], model: /^distil-whisper-large-v3-en$/, perSecond: 0.02 * PER_HOUR },
  // Groq text-to-speech (PlayAI Dialog): $50 per million characters.
  { providers: ["groq"], model: /^playai-tts(-arabic)?$/, perCharacter: 50 * PER_MILLION },

  // https://deepgram.com/pricing: pre-recorded Nova-3 (monolingual) and Nova-2 $0.0043 a minute, Nova-3
  // multilingual $0.0052; Aura-2 $0.030 and Aura $0.015 per 1,000 characters.
  { providers: ["deepgram"], model: /^nova-3(-general|-medical)?$/, perSecond: 0.0043 * PER_MINUTE },
  { providers: ["deepgram"], model: /^nova-3-multilingual$/, perSecond: 0.0052 * PER_MINUTE },
  { providers: ["deepgram"], model: /^nova-2(-[a-z]+)?$/, perSecond: 0.0043 * PER_MINUTE },
  { providers: ["deepgram"], model: /^aura-2-/, perCharacter: 0.03 * PER_THOUSAND },
  { providers: ["deepgram"], model: /^aura-(?!2-)/, perCharacter: 0.015 * PER_THOUSAND },

  // https://elevenlabs.io/pricing/api: Multilingual v2 and v3 $0.10, Flash and Turbo $0.05 per 1,000
  // characters; Scribe speech-to-text $0.40 an hour.
  { providers: ["elevenlabs"], model: /^eleven_(multilingual_v2|v3)$/, perCharacter: 0.1 * PER_THOUSAND },
  { providers: ["elevenlabs"], model: /^eleven_(flash|turbo)_v2(_5)?$/, perCharacter: 0.05 * PER_THOUSAND },
  { providers: ["elevenlabs"], model: /^scribe_v[12]$/, perSecond: 0.4 * PER_HOUR },
];
