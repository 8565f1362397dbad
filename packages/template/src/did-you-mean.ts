/** Levenshtein distance, for did-you-mean suggestions. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** The candidate closest to `word` (also matching a candidate's last dotted segment), if close enough. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const limit = Math.max(2, Math.floor(word.length / 3));
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const last = candidate.slice(candidate.lastIndexOf(".") + 1);
    const distance = Math.min(editDistance(word, candidate), editDistance(word, last));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** ` (did you mean "x"?)` or the empty string. */
export function suggestion(word: string, candidates: readonly string[]): string {
  const hit = didYouMean(word, candidates);
  return hit === undefined ? "" : ` (did you mean "${hit}"?)`;
}
