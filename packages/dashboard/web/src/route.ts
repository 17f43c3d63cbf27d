// Pages are addressed by the URL's hash (#/run/ID …): links work and the server has one page.
import { useEffect, useState } from "react";

export type Route =
  | { page: "runs" }
  | { page: "run"; id: string; step?: number }
  | { page: "compare"; a: string; b: string }
  | { page: "memory" }
  | { page: "sandboxes" }
  | { page: "evals" };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  switch (parts[0]) {
    case "run":
      if (parts[1]) {
        const step = parts[2] ? Number(parts[2]) : Number.NaN;
        return Number.isInteger(step) ? { page: "run", id: parts[1], step } : { page: "run", id: parts[1] };
      }
      break;
    case "compare":
      if (parts[1] && parts[2]) return { page: "compare", a: parts[1], b: parts[2] };
      break;
    case "memory":
    case "sandboxes":
    case "evals":
      return { page: parts[0] };
  }
  return { page: "runs" };
}

export const href = {
  runs: () => "#/",
  run: (id: string) => `#/run/${encodeURIComponent(id)}`,
  compare: (a: string, b: string) => `#/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}`,
  memory: () => "#/memory",
  sandboxes: () => "#/sandboxes",
  evals: () => "#/evals",
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}
