// Settings from every source in one-shot runs, each setting interactively too (the full
// matrix, every source in both modes, is settings-modes.heavy.test.ts).
import { settingsMatrix } from "./settings-modes-suite.js";

settingsMatrix(false);
