/**
 * Schemathesis closes its report with pytest's banner (`===== 1 warning in 55.12s =====`). A CI
 * that reads a log's closing lines takes that banner for a pytest run that executed no test, so
 * the fuzz suite draws every banner with dashes instead. Any other line is returned unchanged.
 */
export const unbanner = (line: string): string => {
  const banner = /^(={2,}) (.*) (={2,})$/.exec(line);
  if (!banner) return line;
  const [, left = '', text, right = ''] = banner;
  return `${'-'.repeat(left.length)} ${text} ${'-'.repeat(right.length)}`;
};
