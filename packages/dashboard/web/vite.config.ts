// The front end's build: React through esbuild's own JSX transform (no Babel), into dist/web,
// which the dashboard's server serves and the package ships.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Relative asset URLs (./assets/…): the page is always served at /, and the package check
  // follows them from index.html to the scripts it loads.
  base: "./",
  esbuild: { jsx: "automatic" },
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1000,
  },
});
