import type { Command } from './router';
import { API_ENV } from './api-env';

/** One option, exit status or environment variable of a command's `--help`, and what it does. */
type Entry = readonly [name: string, meaning: string];

/** What `tessera <command> --help` prints after the usage line and the summary. */
interface HelpSections {
  /** Paragraphs first, before the tables. */
  readonly notes?: readonly string[];
  readonly options?: readonly Entry[];
  readonly exit?: readonly Entry[];
  readonly environment?: readonly Entry[];
}

const section = (title: string, entries: readonly Entry[] | undefined): string[] => {
  if (entries === undefined || entries.length === 0) return [];
  const width = Math.max(...entries.map(([name]) => name.length));
  return ['', `${title}:`, ...entries.map(([name, meaning]) => `  ${name.padEnd(width)}  ${meaning}`)];
};

/**
 * The `details` of a command's help: its notes, then its options, exit statuses and environment
 * variables as aligned tables.
 *
 * @example
 * helpDetails({ exit: [['0', 'the plan tiles']] }) // '\nexit status:\n  0  the plan tiles' without the first newline
 */
export const helpDetails = (help: HelpSections): string =>
  [...(help.notes ?? []), ...section('options', help.options), ...section('exit status', help.exit), ...section('environment', help.environment)]
    .join('\n')
    .replace(/^\n/, '');

const JSON_FLAG: Entry = ['--json', 'print JSON instead of text'];
const WORKERS: Entry = ['--workers PATH', 'the worker module (default: package.json\'s "tessera": { "workers": PATH })'];

/** How the commands that call the API find it and a token; the same options and variables for each. */
const API_OPTIONS: readonly Entry[] = [
  ['--api URL', `the API to call (default: ${API_ENV.apiUrl}, else the running local cloud)`],
  ['--token-file PATH', 'read the JWT from a file (- for standard input)'],
  ['--token JWT', 'the JWT itself; other users can read it in the process list (ps), so prefer the two others'],
];
const API_ENVIRONMENT: readonly Entry[] = [
  [API_ENV.apiUrl, "the API, when --api is not given (the stack's ApiUrl output)"],
  [API_ENV.token, 'the JWT, when neither --token-file nor --token is given'],
];
/** How `run` and `runs watch` end: by the run's ending. */
const RUN_ENDING_EXIT: readonly Entry[] = [
  ['0', 'the run succeeded (with an incomplete answer too, unless --require-complete)'],
  ['1', 'a usage or request error, or waiting for the accepted run failed (its run id is printed)'],
  ['2', 'the run failed or was cancelled (its coverage is still printed)'],
  ['3', '--require-complete: the run succeeded, but its answer is not complete'],
];
const INCOMPLETE_NOTE =
  'A run that succeeded with an incomplete answer (a question unanswered, a gap no other source settled) prints\n' +
  '"succeeded, incomplete", then the missing questions and the unsettled gaps.';

/**
 * Each command's one-line summary, usage and `--help` details, named once: the command's own
 * module uses its entry, and lib/cli/main.ts lists every command with them without importing any
 * command's module (each is loaded only when it runs, so `tessera run` does not pay for the
 * imports of `plan` or `serve`).
 */
export const COMMAND_HELP = {
  plan: {
    summary: 'validate a run request and print the tiling it generates (exit 1 with every problem if it does not tile)',
    usage: 'tessera plan FILE [--json] [--max-deadline-seconds N] [--workers PATH]',
    details: helpDetails({
      options: [JSON_FLAG, ['--max-deadline-seconds N', 'the longest deadline a subtask may ask for (default 900)'], WORKERS],
      exit: [
        ['0', 'the request tiles its universe (warnings, if any, on stderr)'],
        ['1', 'it does not (every problem is printed), or a usage error'],
      ],
      environment: [['MODEL_PROVIDER, BEDROCK_MODEL_ID, BEDROCK_ALLOWED_MODEL_IDS', 'the models a subtask may name (docs/workers.md)']],
    }),
  },
  init: {
    summary: 'create a new project with one worker kind, its tests and a CDK app',
    usage: 'tessera init DIR',
    details: helpDetails({
      notes: ['DIR must not exist, or be empty. Nothing is installed: the next steps are printed.'],
      exit: [
        ['0', 'the project was created'],
        ['1', 'DIR is not empty, or a usage error'],
      ],
    }),
  },
  reconcile: {
    summary: 'print the coverage of a run from its manifest and outcomes (an offline audit)',
    usage: 'tessera reconcile FILE [--json]',
    details: helpDetails({
      notes: ['FILE holds { universe, subtasks, outcomes, sources?, policy?, questions? }; - reads standard input.'],
      options: [JSON_FLAG],
      exit: [
        ['0', 'the coverage was printed, whatever it says'],
        ['1', 'FILE cannot be read or is not a reconcile input (every issue is printed with its path)'],
      ],
    }),
  },
  run: {
    summary: 'run a request against the local cloud (or --api URL) with live progress; print the answer and its coverage',
    usage: 'tessera run FILE [--json] [--require-complete] [--api URL] [--token-file PATH] [--idempotency-key KEY] [--workers PATH]',
    details: helpDetails({
      notes: [INCOMPLETE_NOTE, 'With no API given and no local cloud running, one starts in this process for the run.'],
      options: [
        ['--json', 'print exactly the run resource GET /runs/{runId} returns'],
        ['--require-complete', 'exit 3 when the run succeeded with an incomplete answer'],
        ['--idempotency-key KEY', 'sent as Idempotency-Key: the same key and body start one run only'],
        ...API_OPTIONS,
        WORKERS,
      ],
      exit: RUN_ENDING_EXIT,
      environment: API_ENVIRONMENT,
    }),
  },
  runs: {
    summary: 'list your runs, newest first; show, watch or cancel one by id',
    usage: [
      'tessera runs [--json] [--status running|succeeded|failed|cancelled] [--limit N] [--api URL] [--token-file PATH]',
      '       tessera runs show ID [--json] [--api URL] [--token-file PATH]',
      '       tessera runs watch ID [--json] [--require-complete] [--api URL] [--token-file PATH]',
      '       tessera runs cancel ID [--json] [--api URL] [--token-file PATH]',
    ].join('\n'),
    details: helpDetails({
      notes: [
        "runs          the tenant's runs, newest first (GET /runs), following pages up to --limit (default 20)",
        'runs show     one run as it is now: its answer and coverage once ended, its subtasks (GET /runs/{runId})',
        'runs watch    follow a run to its end with live progress, then print it as tessera run does',
        'runs cancel   cancel a running run (POST /runs/{runId}/cancel): finished outcomes stay, the rest become cancelled',
        '',
        INCOMPLETE_NOTE,
      ],
      options: [
        JSON_FLAG,
        ['--status STATUS', 'runs: only runs of this status'],
        ['--limit N', 'runs: the N newest (default 20)'],
        ['--require-complete', 'runs watch: exit 3 when the run succeeded with an incomplete answer'],
        ...API_OPTIONS,
      ],
      exit: [
        ['0', 'runs, runs show: listed or shown; runs cancel: the run is cancelled'],
        ['1', 'a usage or request error: the API could not be reached or refused the call (404: no such run in your tenant; 409: it had ended)'],
        ['0, 2, 3', 'runs watch: as tessera run (0 succeeded, 2 failed or cancelled, 3 incomplete with --require-complete)'],
      ],
      environment: API_ENVIRONMENT,
    }),
  },
  mcp: {
    summary: 'serve the MCP tools (plan_run, start_run, get_run, wait_for_run…) on stdio, for agents',
    usage: 'tessera mcp [--api URL] [--token-file PATH] [--workers PATH]',
    details: helpDetails({
      notes: [
        'Standard output carries the protocol alone; diagnostics go to standard error. It ends when standard input closes.',
        'plan_run checks requests against the worker module at the construct defaults, as tessera plan does (docs/agents.md).',
      ],
      options: [...API_OPTIONS, WORKERS],
      exit: [
        ['0', 'the client closed standard input'],
        ['1', 'a usage error, or no API given and no local cloud running'],
      ],
      environment: API_ENVIRONMENT,
    }),
  },
  serve: {
    summary: 'start the local cloud (DynamoDB Local, SQS, Step Functions, Lambda, HTTP API) until Ctrl-C',
    usage:
      'tessera serve [--port N] [--run FILE] [--construct PATH] [--workers PATH] [--verbose] [--lambda-port N] [--sfn-port N] [--dynamodb-port N] [--sqs-port N]',
    details: helpDetails({
      notes: [
        'Runs are kept in memory: stopping the cloud forgets them. The API URL and a demo token are in .tessera/local.json.',
        "With a cdk.json, its app is synthesized once and the cloud runs its TesseraFanOut's settings and worker module (docs/local-cloud.md); without one, the construct's defaults.",
      ],
      options: [
        ['--port N', 'the API port (default 7700)'],
        ['--run FILE', 'run this request once the cloud is up, print its answer, and keep serving'],
        ['--construct PATH', "the app's TesseraFanOut to run, by construct path (Stack/FanOut), when it has several"],
        WORKERS,
        ['--verbose', "print every function's logs and the emulators' events"],
        ['--lambda-port N', 'the emulated Lambda API (default: any free port)'],
        ['--sfn-port N', 'the Step Functions interpreter (default: any free port)'],
        ['--dynamodb-port N', 'DynamoDB Local (default: any free port)'],
        ['--sqs-port N', 'the SQS emulator (default: any free port)'],
      ],
      exit: [
        ['0', 'stopped with Ctrl-C'],
        ['1', 'a usage error, Java missing, a port in use, or a CDK app that fails to synthesize or has several fan-outs and no --construct'],
      ],
      environment: [
        ['TESSERA_CACHE_DIR', 'where the synthesized template and compiled launcher are cached (default .tessera/cache)'],
        ['TESSERA_STARTUP_TRACE', 'a file each start-up phase appends a JSON line to (docs/local-cloud.md)'],
      ],
    }),
  },
} as const satisfies Record<string, Pick<Command, 'summary' | 'usage' | 'details'>>;
