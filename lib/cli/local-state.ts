import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { projectDirectory } from '../local/local-cache';

/**
 * Where `tessera serve` leaves its API URL and a demo token, so that `tessera run` in another
 * terminal of the same project finds the running local cloud. Removed when the cloud stops.
 */
export const LOCAL_STATE_FILE = join(projectDirectory(), '.tessera', 'local.json');

export const LocalState = z.object({ apiUrl: z.url(), token: z.string().min(1), tenant: z.string(), pid: z.int(), startedAt: z.string() });
export type LocalState = z.infer<typeof LocalState>;

export const writeLocalState = async (state: LocalState, file = LOCAL_STATE_FILE): Promise<void> => {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
};

export const removeLocalState = async (file = LOCAL_STATE_FILE): Promise<void> => rm(file, { force: true });

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The running local cloud's state, or `undefined` if none is running (a stale file is ignored). */
export const readLocalState = async (file = LOCAL_STATE_FILE): Promise<LocalState | undefined> => {
  try {
    const state = LocalState.parse(JSON.parse(await readFile(file, 'utf8')));
    return alive(state.pid) ? state : undefined;
  } catch {
    return undefined;
  }
};
