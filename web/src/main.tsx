import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import "./styles.css";
// The demo's own cards (web/src/demo registers them): delete this line (and web/src/demo) for a project
// without the demo. A glob, so a project rendered without that folder (`hitl new project`) builds as is.
import.meta.glob("./demo/index.ts", { eager: true });

const root = document.getElementById("root");
if (!root) throw new Error("missing #root");
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
