import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDynamoDbLocal } from '../../lib/local/dynamodb-local';
import { localCredentials, localRegion } from '../support/aws';

const root = mkdtempSync(join(tmpdir(), 'tessera-ddb-launcher-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const answers = async (endpoint: string): Promise<boolean> => {
  const client = new DynamoDBClient({ endpoint, region: localRegion, credentials: localCredentials });
  const listed = await client.send(new ListTablesCommand({}));
  client.destroy();
  return Array.isArray(listed.TableNames);
};

const launcherJars = (cacheDir: string): string[] => {
  const dir = join(cacheDir, 'dynamodb-local');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((entry) => join(dir, entry, 'launcher.jar'))
    .filter((path) => existsSync(path));
};

describe("DynamoDB Local's launcher in the local cache", () => {
  it('is compiled into an empty cache once, and the next start runs the same compiled launcher', { timeout: 300_000 }, async () => {
    const cacheDir = join(root, 'cache');
    const first = await startDynamoDbLocal({ cacheDir });
    try {
      expect(await answers(first.endpoint)).toBe(true);
    } finally {
      await first.stop();
    }
    const jars = launcherJars(cacheDir);
    expect(jars).toHaveLength(1);
    const compiledAt = statSync(jars[0] as string).mtimeMs;

    const second = await startDynamoDbLocal({ cacheDir });
    try {
      expect(await answers(second.endpoint)).toBe(true);
    } finally {
      await second.stop();
    }
    expect(launcherJars(cacheDir)).toEqual(jars);
    expect(statSync(jars[0] as string).mtimeMs).toBe(compiledAt);
  });

  it('falls back to running the launcher from its source when the cache cannot be written', { timeout: 300_000 }, async () => {
    const blocked = join(root, 'not-a-directory');
    writeFileSync(blocked, '');
    const ddb = await startDynamoDbLocal({ cacheDir: join(blocked, 'cache') });
    try {
      expect(await answers(ddb.endpoint)).toBe(true);
    } finally {
      await ddb.stop();
    }
  });
});
