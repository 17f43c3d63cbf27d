// Text wrapped at the width, without padding (a copied line has no trailing blanks).
import { type Component, wrapTextWithAnsi } from "@mariozechner/pi-tui";

export class Block implements Component {
  private cache: { width: number; lines: string[] } | undefined;
  constructor(private text: string) {}
  setText(text: string): void {
    this.text = text;
    this.cache = undefined;
  }
  render(width: number): string[] {
    if (this.cache?.width !== width)
      this.cache = {
        width,
        lines: this.text.split("\n").flatMap((l) => (l ? wrapTextWithAnsi(l, width) : [""])),
      };
    return this.cache.lines;
  }
  invalidate(): void {
    this.cache = undefined;
  }
}
