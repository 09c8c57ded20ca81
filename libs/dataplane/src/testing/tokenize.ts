// Shell-like word splitting for rule text: whitespace separates, double quotes group, and
// `{`, `}` and `,` stand alone (nft set literals). Used only by the test tracers.

/** Splits `text` into words; quoted words lose their quotes. */
export function tokenize(text: string, braces = false): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (ch === '"') {
      const end = text.indexOf('"', i + 1);
      if (end < 0) throw new Error(`unterminated quote in: ${text}`);
      cur += text.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (ch === ' ' || ch === '\t') {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else if (braces && (ch === '{' || ch === '}' || ch === ',' || ch === ';')) {
      if (inWord) out.push(cur);
      out.push(ch);
      cur = '';
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}
