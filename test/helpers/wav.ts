/** A PCM WAV of `seconds` of silence (16 kHz mono 16-bit): its header says how long it plays. */
export function silentWav(seconds: number): Uint8Array<ArrayBuffer> {
  const rate = 16_000;
  const samples = Math.round(seconds * rate);
  const data = samples * 2;
  const buffer = new Uint8Array(44 + data);
  const view = Buffer.from(buffer.buffer);
  view.write("RIFF", 0);
  view.writeUInt32LE(36 + data, 4);
  view.write("WAVE", 8);
  view.write("fmt ", 12);
  view.writeUInt32LE(16, 16);
  view.writeUInt16LE(1, 20);
  view.writeUInt16LE(1, 22);
  view.writeUInt32LE(rate, 24);
  view.writeUInt32LE(rate * 2, 28);
  view.writeUInt16LE(2, 32);
  view.writeUInt16LE(16, 34);
  view.write("data", 36);
  view.writeUInt32LE(data, 40);
  return buffer;
}
