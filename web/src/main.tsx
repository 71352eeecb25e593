import "@mantine/core/styles.css";
import "uplot/dist/uPlot.min.css";
import "./ui/app.css";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { earlyCheckDone, startEarly } from "./early";

startEarly(location.pathname);
void earlyCheckDone().then(() => createRoot(document.getElementById("root")!).render(<App />));
