// A line diff (longest common subsequence) of two job configs.

export interface DiffLine {
  op: ' ' | '+' | '-';
  text: string;
}

/** Most lines on either side diffed line by line; beyond it, whole sides. */
const MAX_LINES = 4000;

export function diffLines(a: string[], b: string[]): DiffLine[] {
  // Common head and tail need no table.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: ' ', text }));
  if (x.length > MAX_LINES || y.length > MAX_LINES) {
    x.forEach((text) => out.push({ op: '-', text }));
    y.forEach((text) => out.push({ op: '+', text }));
  } else {
    // lcs[i][j]: length of the LCS of x[i:] and y[j:].
    const n = x.length;
    const m = y.length;
    const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (x[i] === y[j]) {
        out.push({ op: ' ', text: x[i] });
        i++;
        j++;
      } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: '-', text: x[i++] });
      else out.push({ op: '+', text: y[j++] });
    }
    while (i < n) out.push({ op: '-', text: x[i++] });
    while (j < m) out.push({ op: '+', text: y[j++] });
  }
  a.slice(a.length - tail).forEach((text) => out.push({ op: ' ', text }));
  return out;
}

/** YAML-like lines of a JSON value, keys in a stable order. */
export function specLines(v: unknown, indent = ''): string[] {
  if (v === null || typeof v !== 'object') return [indent + JSON.stringify(v)];
  if (Array.isArray(v)) {
    if (v.every((x) => x === null || typeof x !== 'object')) return [indent + JSON.stringify(v)];
    return v.flatMap((x) => {
      const inner = specLines(x, indent + '  ');
      inner[0] = indent + '- ' + inner[0].slice(indent.length + 2);
      return inner;
    });
  }
  const out: string[] = [];
  for (const k of Object.keys(v as object).sort()) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== null && typeof x === 'object' && !(Array.isArray(x) && x.every((y) => y === null || typeof y !== 'object'))) {
      if (Object.keys(x).length === 0) out.push(`${indent}${k}: ${Array.isArray(x) ? '[]' : '{}'}`);
      else out.push(`${indent}${k}:`, ...specLines(x, indent + '  '));
    } else out.push(`${indent}${k}: ${JSON.stringify(x)}`);
  }
  return out;
}

/** Only the changed lines with `context` lines around each change. */
export function hunks(lines: DiffLine[], context = 3): (DiffLine | null)[] {
  const keep = new Uint8Array(lines.length);
  lines.forEach((l, i) => {
    if (l.op === ' ') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = 1;
  });
  const out: (DiffLine | null)[] = [];
  let skipped = false;
  lines.forEach((l, i) => {
    if (keep[i]) {
      if (skipped && out.length) out.push(null);
      skipped = false;
      out.push(l);
    } else skipped = true;
  });
  return out;
}
