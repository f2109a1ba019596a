import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { FAN_OUT_METADATA_KEY, FanOutMetadata, type LocalFanOutProps } from '../infra/fan-out-metadata';
import { ProjectAppError } from './errors';

/*
 * The local cloud runs the project's own fan-out: `tessera serve` synthesizes the CDK app that the
 * project's cdk.json names, as `cdk synth` would (cdk.json's and cdk.context.json's context, but no
 * bundling: the local cloud runs the handler modules themselves), finds each `TesseraFanOut` by the
 * metadata the construct writes (lib/infra/fan-out-metadata.ts), and starts with its settings.
 * CDK-free: the app runs in a child process, and only its cloud assembly's JSON is read here.
 */

/** The project file naming the app, as the CDK CLI reads it. */
export const CDK_JSON = 'cdk.json';
/** Context the CDK CLI saved from lookups; the CLI passes it to the app with cdk.json's. */
const CDK_CONTEXT_JSON = 'cdk.context.json';

const CdkJson = z.object({ app: z.string().min(1).optional(), context: z.record(z.string(), z.unknown()).optional() });

const MetadataEntries = z.record(z.string(), z.array(z.object({ type: z.string(), data: z.unknown().optional() })));
const Artifact = z.object({
  type: z.string(),
  metadata: MetadataEntries.optional(),
  // Newer CDK versions keep a stack's metadata in a file of its own beside the manifest.
  additionalMetadataFile: z.string().optional(),
  properties: z.object({ directoryName: z.string().optional() }).optional(),
});
const Manifest = z.object({ artifacts: z.record(z.string(), Artifact).optional() });

/** A `TesseraFanOut` of a synthesized app: its construct path (`TodoReview/FanOut`) and its metadata. */
export interface AppFanOut {
  readonly constructPath: string;
  readonly metadata: FanOutMetadata;
}

/**
 * What the local cloud runs: the fan-out of the project's app, or the construct's defaults, with
 * why (no cdk.json, no `app` in it, no `TesseraFanOut` in the app).
 */
export type ProjectFanOut =
  | {
      readonly source: 'app';
      /** The app command, as cdk.json gives it. */
      readonly app: string;
      readonly constructPath: string;
      /** Absolute path of the fan-out's worker module. */
      readonly workers: string;
      readonly props: LocalFanOutProps;
    }
  | { readonly source: 'default'; readonly reason: string };

const readJson = (path: string, what: string, cdkJson: string): unknown => {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ProjectAppError(cdkJson, `cannot read ${what} ${path}: ${(error as Error).message}`, { cause: error });
  }
};

/** The construct path of a manifest metadata key: `/TodoReview/FanOut` → `TodoReview/FanOut`. */
const constructPathOf = (key: string): string => key.replace(/^\//, '');

const fanOutOf = (key: string, data: unknown, cdkJson: string): AppFanOut => {
  const parsed = FanOutMetadata.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(metadata)'}: ${issue.message}`);
    throw new ProjectAppError(cdkJson, `the ${FAN_OUT_METADATA_KEY} metadata of ${constructPathOf(key)} is not usable: ${problems.join('; ')}`);
  }
  return { constructPath: constructPathOf(key), metadata: parsed.data };
};

/** A stack artifact's metadata entries by construct path: those inline and those of its metadata file. */
const stackMetadata = (assemblyDir: string, artifact: z.infer<typeof Artifact>, cdkJson: string): z.infer<typeof MetadataEntries> => {
  const file = artifact.additionalMetadataFile;
  if (file === undefined) return artifact.metadata ?? {};
  const fromFile = MetadataEntries.safeParse(readJson(join(assemblyDir, file), 'the stack metadata', cdkJson));
  if (!fromFile.success) throw new ProjectAppError(cdkJson, `its stack metadata ${file} is not one: ${z.prettifyError(fromFile.error)}`);
  return { ...artifact.metadata, ...fromFile.data };
};

/**
 * Every `TesseraFanOut` of a cloud assembly, in the manifest's order: from each stack's metadata
 * (inline, or in its `additionalMetadataFile`) and from nested assemblies (a `Stage`'s).
 * `cdkJson` names the project in errors.
 *
 * @example
 * fanOutsInAssembly('/tmp/cdk.out', 'cdk.json') // [{ constructPath: 'TodoReview/FanOut', metadata: { version: 1, … } }]
 */
export const fanOutsInAssembly = (assemblyDir: string, cdkJson: string): AppFanOut[] => {
  const manifest = Manifest.safeParse(readJson(join(assemblyDir, 'manifest.json'), 'the cloud assembly manifest', cdkJson));
  if (!manifest.success) throw new ProjectAppError(cdkJson, `its cloud assembly manifest is not one: ${z.prettifyError(manifest.error)}`);
  return Object.values(manifest.data.artifacts ?? {}).flatMap((artifact): AppFanOut[] => {
    if (artifact.type === 'cdk:cloud-assembly' && artifact.properties?.directoryName !== undefined) {
      return fanOutsInAssembly(join(assemblyDir, artifact.properties.directoryName), cdkJson);
    }
    if (artifact.type !== 'aws:cloudformation:stack') return [];
    return Object.entries(stackMetadata(assemblyDir, artifact, cdkJson)).flatMap(([key, list]) =>
      list.filter((entry) => entry.type === FAN_OUT_METADATA_KEY).map((entry) => fanOutOf(key, entry.data, cdkJson)),
    );
  });
};

/**
 * The fan-out the local cloud runs, of those `found` in the app: the one `construct` names (with
 * or without the leading `/`), else the only one. Several and none named, or a name that matches
 * none, is an error naming the candidates; none at all is `undefined` (the defaults apply).
 *
 * @example
 * chooseFanOut(found, 'Prod/FanOut', 'cdk.json')
 */
export const chooseFanOut = (found: readonly AppFanOut[], construct: string | undefined, cdkJson: string): AppFanOut | undefined => {
  const candidates = found.map((fanOut) => fanOut.constructPath).join(', ');
  if (construct !== undefined) {
    const chosen = found.find((fanOut) => fanOut.constructPath === constructPathOf(construct));
    if (chosen) return chosen;
    throw new ProjectAppError(
      cdkJson,
      found.length === 0
        ? `--construct ${construct}: the app has no TesseraFanOut`
        : `--construct ${construct} names no TesseraFanOut of the app (its TesseraFanOut constructs: ${candidates})`,
    );
  }
  if (found.length > 1) {
    throw new ProjectAppError(cdkJson, `the app has ${found.length} TesseraFanOut constructs: pass --construct PATH with one of ${candidates}`);
  }
  return found[0];
};

/** The last line of an app's standard error that says what went wrong (an error's message, not its stack). */
const failureLine = (stderr: string): string => {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('at ') && !line.startsWith('Node.js v') && line !== '^');
  return lines.findLast((line) => /^[A-Za-z]*(Error|Exception|InvalidConstructProps)\b/.test(line)) ?? lines.at(-1) ?? '(no output)';
};

/** Most of an app's standard error that is kept for its failure message. */
const STDERR_KEPT = 64 * 1024;

/**
 * Runs the app command in `project` with the CDK CLI's environment (`CDK_OUTDIR`, `CDK_CONTEXT_JSON`)
 * and resolves once it has written its cloud assembly to `outdir`.
 */
const runApp = (app: string, project: string, outdir: string, context: Record<string, unknown>, cdkJson: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn(app, {
      shell: true,
      cwd: project,
      env: { ...process.env, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify(context) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT);
    });
    child.on('error', (error) => reject(new ProjectAppError(cdkJson, `cannot run \`${app}\`: ${error.message}`, { cause: error })));
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new ProjectAppError(cdkJson, `\`${app}\` failed to synthesize (${signal ?? `exit ${code}`}): ${failureLine(stderr)}`));
    });
  });

/**
 * The fan-out of the project's CDK app, synthesized once: `project`'s cdk.json names the app
 * command, which runs with cdk.json's and cdk.context.json's context and bundling off (nothing is
 * deployed from it, and esbuild would only cost time). With no cdk.json, no `app` in it, or no
 * `TesseraFanOut` in the app, the construct's defaults apply, and `reason` says why. An app that
 * fails to synthesize, or a choice `construct` does not settle, throws `ProjectAppError`.
 *
 * @example
 * const fanOut = await projectFanOut({ project: '/home/me/my-project' });
 * if (fanOut.source === 'app') await startTesseraCloud({ workers: fanOut.workers, fanOut: fanOut.props });
 */
export const projectFanOut = async (options: { readonly project: string; readonly construct?: string }): Promise<ProjectFanOut> => {
  const cdkJson = join(options.project, CDK_JSON);
  if (!existsSync(cdkJson)) {
    if (options.construct !== undefined) throw new ProjectAppError(cdkJson, `--construct ${options.construct}: there is no ${CDK_JSON}`);
    return { source: 'default', reason: `no ${CDK_JSON} in ${options.project}` };
  }
  const parsed = CdkJson.safeParse(readJson(cdkJson, 'the project file', cdkJson));
  if (!parsed.success) throw new ProjectAppError(cdkJson, `not a cdk.json: ${z.prettifyError(parsed.error)}`);
  const { app } = parsed.data;
  if (app === undefined) {
    if (options.construct !== undefined) throw new ProjectAppError(cdkJson, `--construct ${options.construct}: it names no "app"`);
    return { source: 'default', reason: `${CDK_JSON} names no "app"` };
  }
  const saved = join(options.project, CDK_CONTEXT_JSON);
  const savedContext = existsSync(saved)
    ? z
        .record(z.string(), z.unknown())
        .catch({})
        .parse(readJson(saved, 'the saved context', cdkJson))
    : {};
  const context = { ...savedContext, ...parsed.data.context, 'aws:cdk:bundling-stacks': [] };
  const outdir = mkdtempSync(join(tmpdir(), 'tessera-app-'));
  try {
    await runApp(app, options.project, outdir, context, cdkJson);
    const chosen = chooseFanOut(fanOutsInAssembly(outdir, cdkJson), options.construct, cdkJson);
    if (chosen === undefined) return { source: 'default', reason: `the app \`${app}\` has no TesseraFanOut` };
    const { version: _version, workers, ...props } = chosen.metadata;
    return { source: 'app', app, constructPath: chosen.constructPath, workers, props };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
};
