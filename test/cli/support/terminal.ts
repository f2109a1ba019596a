import type { CliIo } from '../../../lib/cli/router';

/** An in-memory terminal and file system for the CLI: what it printed, and the files it may read. */
export const terminal = (files: Record<string, string> = {}) => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
    readText: async (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return text;
    },
  };
  return { io, out, err };
};
