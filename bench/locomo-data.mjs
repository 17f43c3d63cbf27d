export function fromLocomo(data) {
  return data.map((item, ci) => {
    const conv = item.conversation;
    const turns = [];
    const sessions = Object.keys(conv)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.split("_")[1]) - Number(b.split("_")[1]));
    for (const s of sessions) {
      const date = conv[`${s}_date_time`] ?? "";
      for (const t of conv[s]) turns.push({ key: t.dia_id, speaker: t.speaker, text: t.text, date });
    }
    const questions = item.qa
      .filter((q) => q.answer !== undefined)
      .map((q) => ({
        question: q.question,
        answer: String(q.answer),
        category: q.category,
        evidence: (q.evidence ?? []).flatMap((e) => e.split(/[;,]\s*/)).filter((e) => /^D\d+:\d+$/.test(e)),
      }));
    return { id: item.sample_id ?? String(ci), turns, questions };
  });
}
