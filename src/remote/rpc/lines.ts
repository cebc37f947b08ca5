import { MAX_LINE_BYTES } from "./call.ts";

export type LineEvent = { line: string } | { overflow: true };

/**
 * Splits a byte stream into lines without ever holding more than `max` bytes of one: a longer
 * line is reported once as an overflow and the rest of it is skipped up to its newline. Chunks
 * are kept as they came and joined once per line, so a large line costs no repeated copying.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(private readonly max = MAX_LINE_BYTES) {}

  push(chunk: Buffer): LineEvent[] {
    const out: LineEvent[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!this.skipping) {
        if (this.size + (end - start) > this.max) {
          this.parts = [];
          this.size = 0;
          this.skipping = true;
          out.push({ overflow: true });
        } else if (end > start) {
          this.parts.push(chunk.subarray(start, end));
          this.size += end - start;
        }
      }
      if (nl < 0) break;
      if (!this.skipping) {
        const line = Buffer.concat(this.parts, this.size).toString("utf8");
        if (line.trim() !== "") out.push({ line });
      }
      this.parts = [];
      this.size = 0;
      this.skipping = false;
      start = nl + 1;
    }
    return out;
  }
}
