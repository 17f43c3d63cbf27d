// The shell: navigation and the page the hash names. A page that throws shows its error, not a
// blank screen.
import { Component, type ReactNode } from "react";
import { ComparePage } from "./pages/Compare.js";
import { EvalsPage } from "./pages/Evals.js";
import { MemoryPage } from "./pages/Memory.js";
import { RunPage } from "./pages/Run.js";
import { RunsPage } from "./pages/Runs.js";
import { SandboxesPage } from "./pages/Sandboxes.js";
import { href, type Route, useRoute } from "./route.js";

class Guard extends Component<{ children: ReactNode; page: string }, { error?: Error }> {
  override state: { error?: Error } = {};
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  override componentDidUpdate(prev: { page: string }) {
    if (prev.page !== this.props.page && this.state.error) this.setState({ error: undefined });
  }
  override render() {
    if (this.state.error)
      return (
        <div className="error" role="alert">
          This page failed to render: {this.state.error.message}
        </div>
      );
    return this.props.children;
  }
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "run":
      return <RunPage key={route.id} id={route.id} />;
    case "compare":
      return <ComparePage key={`${route.a}/${route.b}`} a={route.a} b={route.b} />;
    case "memory":
      return <MemoryPage />;
    case "sandboxes":
      return <SandboxesPage />;
    case "evals":
      return <EvalsPage />;
    default:
      return <RunsPage />;
  }
}

export function App() {
  const route = useRoute();
  const at = route.page === "compare" || route.page === "run" ? "runs" : route.page;
  const link = (page: string, to: string, label: string) => (
    <a href={to} className={at === page ? "active" : ""}>
      {label}
    </a>
  );
  return (
    <>
      <nav className="top">
        <span className="brand">Hands</span>
        {link("runs", href.runs(), "Runs")}
        {link("memory", href.memory(), "Memory")}
        {link("sandboxes", href.sandboxes(), "Sandboxes")}
        {link("evals", href.evals(), "Evals")}
      </nav>
      <main>
        <Guard page={JSON.stringify(route)}>
          <Page route={route} />
        </Guard>
      </main>
    </>
  );
}
