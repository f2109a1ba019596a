import type { Command } from './router';

/**
 * Each command's one-line summary and usage, named once: the command's own module uses its entry,
 * and lib/cli/main.ts lists every command with them without importing any command's module (each
 * is loaded only when it runs, so `tessera run` does not pay for the imports of `plan` or `serve`).
 */
export const COMMAND_HELP = {
  plan: {
    summary: 'validate a run request and print the tiling it generates (exit 1 with every problem if it does not tile)',
    usage: 'tessera plan FILE [--json] [--max-deadline-seconds N] [--workers PATH]',
  },
  init: {
    summary: 'create a new project with one worker kind, its tests and a CDK app',
    usage: 'tessera init DIR',
  },
  reconcile: {
    summary: 'print the coverage of a run from its manifest and outcomes (an offline audit)',
    usage: 'tessera reconcile FILE [--json]',
  },
  run: {
    summary: 'run a request against the local cloud (or --api URL) with live progress; print the answer and its coverage',
    usage: 'tessera run FILE [--json] [--require-complete] [--api URL] [--token JWT] [--idempotency-key KEY] [--workers PATH]',
    details: [
      'A run that succeeded with an incomplete answer (a question unanswered, a gap no other source settled) prints',
      '"succeeded, incomplete", then the missing questions and the unsettled gaps.',
      '',
      'exit status:',
      '  0  the run succeeded (with an incomplete answer too, unless --require-complete)',
      '  1  a usage or request error, or waiting for the accepted run failed',
      '  2  the run failed or was cancelled (its coverage is still printed)',
      '  3  --require-complete: the run succeeded, but its answer is not complete',
    ].join('\n'),
  },
  runs: {
    summary: 'list your runs, newest first (GET /runs): --status, --limit, --json',
    usage: 'tessera runs [--json] [--status running|succeeded|failed|cancelled] [--limit N] [--api URL] [--token JWT]',
  },
  mcp: {
    summary: 'serve the MCP tools (plan_run, start_run, get_run, wait_for_run…) on stdio, for agents',
    usage: 'tessera mcp [--api URL] [--token JWT] [--workers PATH]',
  },
  serve: {
    summary: 'start the local cloud (DynamoDB Local, SQS, Step Functions, Lambda, HTTP API) until Ctrl-C',
    usage: 'tessera serve [--port N] [--run FILE] [--workers PATH] [--verbose] [--lambda-port N] [--sfn-port N] [--dynamodb-port N] [--sqs-port N]',
  },
} as const satisfies Record<string, Pick<Command, 'summary' | 'usage' | 'details'>>;
