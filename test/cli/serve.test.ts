import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localCloudLog } from '../../lib/cli/local';
import type { CliIo } from '../../lib/cli/router';
import { banner, projectRequests } from '../../lib/cli/serve';

const terminal = () => {
  const err: string[] = [];
  const io: CliIo = { out: () => undefined, err: (text) => void err.push(text), readText: async () => '' };
  return { io, err };
};

describe('tessera serve', () => {
  it('says plainly in its banner that runs live in memory and end with the cloud', () => {
    const lines = banner('http://127.0.0.1:7700', {
      stepFunctions: 'http://127.0.0.1:1',
      lambda: 'http://127.0.0.1:2',
      dynamodb: 'http://127.0.0.1:3',
      sqs: 'http://127.0.0.1:4',
    }).split('\n');
    expect(lines).toContain('Runs are kept in memory: stopping or restarting the local cloud forgets every run and issues a new token.');
  });

  it("prints the viewer's address with the token in the fragment, which no request carries", () => {
    const lines = banner(
      'http://127.0.0.1:7700',
      { stepFunctions: 'http://127.0.0.1:1', lambda: 'http://127.0.0.1:2', dynamodb: 'http://127.0.0.1:3', sqs: 'http://127.0.0.1:4' },
      'a.b-c',
    ).split('\n');
    expect(lines[1]).toBe('  Viewer          http://127.0.0.1:7700/#token=a.b-c');
  });

  it("suggests the project's own requests: requests/ (the starter's), else examples/, else a placeholder", () => {
    const project = mkdtempSync(join(tmpdir(), 'tessera-serve-'));
    expect(projectRequests(project, project)).toEqual([]);
    mkdirSync(join(project, 'examples'));
    writeFileSync(join(project, 'examples', 'tax.json'), '{}');
    expect(projectRequests(project, project)).toEqual(['examples/tax.json']);
    mkdirSync(join(project, 'requests'));
    writeFileSync(join(project, 'requests', 'todo-review.json'), '{}');
    writeFileSync(join(project, 'requests', 'notes.txt'), '');
    writeFileSync(join(project, 'requests', 'b-skip.json'), '{}');
    expect(projectRequests(project, join(project, 'requests'))).toEqual(['b-skip.json', 'todo-review.json']);
    const requests = projectRequests(project, project);
    expect(requests).toEqual(['requests/b-skip.json', 'requests/todo-review.json']);

    const endpoints = { stepFunctions: 'http://127.0.0.1:1', lambda: 'http://127.0.0.1:2', dynamodb: 'http://127.0.0.1:3', sqs: 'http://127.0.0.1:4' };
    const lines = banner('http://127.0.0.1:7700', endpoints, 't', requests).split('\n');
    expect(lines).toContain('  npx tessera run requests/b-skip.json');
    expect(lines.at(-1)).toBe('Requests: requests/ (2 files)');
    expect(lines.some((line) => line.includes('examples/scout.json'))).toBe(false);
    expect(banner('http://127.0.0.1:7700', endpoints, 't', []).split('\n')).toContain('  npx tessera run path/to/request.json');
  });

  it("prints the local cloud's error entries without --verbose, and everything with it", () => {
    const entries = [
      { level: 'info', component: 'cloud', message: 'local cloud ready' },
      { level: 'warn', component: 'lambda', message: 'Worker failed: TransientFailure' },
      { level: 'error', component: 'esm', message: 'the invocation of Worker was lost, returning its 5 messages to the queue' },
    ] as const;
    const quiet = terminal();
    const verbose = terminal();
    for (const entry of entries) {
      localCloudLog(quiet.io, false)(entry);
      localCloudLog(verbose.io, true)(entry);
    }
    expect(quiet.err).toEqual(['[esm] the invocation of Worker was lost, returning its 5 messages to the queue']);
    expect(verbose.err).toHaveLength(3);
  });
});
