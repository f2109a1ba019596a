import { z } from 'zod';
import { defineWorker, fileSource } from '@tessera-fanout/tessera/workers';
import { FIXTURE_REPO } from './fixture-repo.js';

/**
 * `todo-review`: lists the TODO and FIXME lines of the files it is assigned. It works in the
 * `paths` dimension: a subtask is assigned files, or line ranges of files, and the file tool
 * records exactly which files and lines it returned. That record, not the worker, is the
 * outcome's coverage, so a file the worker leaves unread shows up in the answer as a
 * `lines_not_inspected` gap.
 */

const MARKER = /\b(TODO|FIXME)\b:?\s*(.*)$/;

export const TodoItem = z.object({ path: z.string(), line: z.int().min(1), tag: z.enum(['TODO', 'FIXME']), text: z.string() });
export const TodoFindings = z.object({ items: z.array(TodoItem) });
export type TodoFindings = z.infer<typeof TodoFindings>;

export const ReviewInput = z.strictObject({
  /** Path prefixes to leave alone (vendored code). Their lines are reported as not inspected. */
  ignore: z.array(z.string().min(1)).default([]),
});

const linesOf = (text: string): string[] => text.replace(/\n$/, '').split('\n');

/** The repository as a file source: `files` maps a path to its text. */
export const repositorySource = (files: Readonly<Record<string, string>>) =>
  fileSource({
    description: 'Files of the repository under review',
    load: async (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`${path} is not in the repository`);
      return linesOf(text);
    },
  });

export const createTodoReview = (files: Readonly<Record<string, string>> = FIXTURE_REPO) =>
  defineWorker({
    kind: 'todo-review',
    dimension: 'paths',
    label: 'repository',
    recordNoun: 'lines',
    input: ReviewInput,
    output: TodoFindings,
    sources: { repo: repositorySource(files) },
    merge: (findings) => ({
      items: findings.flatMap((f) => f.items).sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line),
    }),
    summarize: ({ items }) => `${items.length} TODO/FIXME lines in ${new Set(items.map((i) => i.path)).size} files.`,
    run: async (ctx) => {
      const items: z.infer<typeof TodoItem>[] = [];
      for (const file of ctx.assignment.scope.files) {
        if (ctx.assignment.input.ignore.some((prefix) => file.path.startsWith(prefix))) continue;
        // Read what was assigned: the whole file, or each assigned range of it.
        const reads = file.lines === undefined ? [{ path: file.path, first: 1 }] : file.lines.map((lines) => ({ path: file.path, lines, first: lines[0] }));
        for (const { first, ...request } of reads) {
          const lines = await ctx.tools.repo(request);
          lines.forEach((text, i) => {
            const found = MARKER.exec(text);
            if (found) items.push({ path: file.path, line: first + i, tag: found[1] as 'TODO' | 'FIXME', text: (found[2] ?? '').trim() });
          });
        }
      }
      return { items };
    },
  });

export const todoReview = createTodoReview();
