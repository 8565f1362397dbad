/** Longer words are never compared letter by letter: a hostile 1 MB key must not cost a 1 MB² table. */
const MAX_COMPARED_LENGTH = 64;

/**
 * The candidate a misspelt `word` most likely meant, or undefined when none is close: a
 * candidate equal up to case, camelCase or kebab-case wins at once; otherwise the one at the
 * smallest edit distance (insertions, deletions, substitutions, adjacent swaps), also measured
 * against a dotted candidate's last segment (`readable` → `scope.readable`), if within a third
 * of its length (at least 1, at most 3).
 */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const normalized = normalizeWord(word);
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (normalizeWord(candidate) === normalized) return candidate;
    const last = candidate.slice(candidate.lastIndexOf(".") + 1);
    const distance = Math.min(
      editDistance(lower, candidate),
      last === candidate ? Infinity : editDistance(lower, last),
    );
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(1, Math.min(3, Math.floor(best.length / 3)));
  return bestDistance <= limit ? best : undefined;
}

/** ` (did you mean "x"?)` for the closest candidate, or the empty string. */
export function didYouMeanSuffix(word: string, candidates: readonly string[]): string {
  const hit = didYouMean(word, candidates);
  return hit === undefined ? "" : ` (did you mean "${hit}"?)`;
}

/** camelCase, kebab-case and case differences all map onto the same snake_case form. */
function normalizeWord(word: string): string {
  return word
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[-\s]/g, "_")
    .toLowerCase();
}

/** Optimal-string-alignment distance: insertions, deletions, substitutions, adjacent swaps. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length > MAX_COMPARED_LENGTH || b.length > MAX_COMPARED_LENGTH) return Math.max(a.length, b.length);
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      row.push(value);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length]!;
}
