// Results of `npm run eval` over time, per task.
export function EvalsPage() {
  return (
    <section className="page">
      <h1>Evals</h1>
      <p className="muted">Not recorded yet.</p>
    </section>
  );
}
