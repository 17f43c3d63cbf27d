// Every setting from every source, in a one-shot run and an interactive session alike.
import { settingsMatrix } from "./settings-modes-suite.js";

settingsMatrix(true);
