// Where a virtualised list (@tanstack/react-virtual) places one row: absolutely, at its offset.
import type { VirtualItem } from "@tanstack/react-virtual";
import type { CSSProperties } from "react";

/** Row `v`'s style; a row whose height the list measures (`measureElement`) gets none set. */
export function virtualRowStyle(v: VirtualItem, measured = false): CSSProperties {
  return {
    position: "absolute",
    top: 0,
    left: 0,
    right: 0,
    ...(measured ? {} : { height: v.size }),
    transform: `translateY(${v.start}px)`,
  };
}
