/**
 * Text drawn from live state at the moment of drawing, and the one clock reading each drawn
 * frame shares: the herd widget and the progress of a wait or delegate read the same records
 * at the same instant, so they never show a sheep in two states or at two different seconds.
 */
// The @mariozechner name is aliased by every pi, old and new, to its own pi-tui.
import { Text } from "@mariozechner/pi-tui";

/** Date.now() read once per synchronous render pass: pi-tui draws a whole frame without yielding. */
export class FrameClock {
  private value: number | undefined;

  now(): number {
    if (this.value === undefined) {
      this.value = Date.now();
      queueMicrotask(() => {
        this.value = undefined;
      });
    }
    return this.value;
  }
}

/** A pi-tui component whose text is computed again every time pi draws it. */
export class LiveText {
  private readonly text: Text;

  constructor(
    private readonly compute: () => string,
    paddingX = 0,
  ) {
    this.text = new Text("", paddingX, 0);
  }

  render(width: number): readonly string[] {
    this.text.setText(this.compute());
    return this.text.render(width);
  }

  invalidate(): void {
    this.text.invalidate();
  }
}
