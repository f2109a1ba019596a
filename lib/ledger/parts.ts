/**
 * Large attributes stored beside their item. DynamoDB caps an item at 400 KB, and every update
 * of an item is billed per started KB of the whole item, so an attribute that can grow with the
 * caller's data (a run request with 100,000 ids, a subtask's assigned ids, an outcome's observed
 * ids, an answer naming missing ids) is moved out of its item once it is larger than
 * {@link INLINE_VALUE_BYTES}: its JSON is gzip-compressed, cut into binary *part* items of at
 * most {@link PART_BYTES} in the same partition, and the owning item keeps a reference
 * (`<attribute>Parts`: sort-key prefix, count, size, SHA-256). Parts are written in the same
 * transaction as the reference, so a reader never sees a reference without its parts; they are
 * never updated, only written whole under a new prefix. See docs/ledger.md ("Parts").
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { CorruptItem, type LedgerErrorContext } from './errors';
import { queryPartition, type LedgerContext, type LedgerTransactItem } from './io';
import { SORT_KEYS } from './keys';
import { valueSize } from './size';

/** A spillable attribute larger than this (as DynamoDB counts it) is stored in parts. */
export const INLINE_VALUE_BYTES = 16 * 1024;
/** Compressed bytes per part item (DynamoDB's item limit is 400 KB). */
export const PART_BYTES = 300 * 1024;

/** The reference an owning item keeps to an attribute stored in parts. */
export const PartsRef = z.object({
  /** Sort-key prefix shared by the parts; part n (0-based) is `<prefix><n, 4 digits>`. */
  prefix: z.string().min(1),
  count: z.int().min(1),
  /** Length of the compressed JSON, all parts together. */
  bytes: z.int().min(0),
  /** SHA-256 of the compressed JSON, hex. */
  sha256: z.string(),
});
export type PartsRef = z.infer<typeof PartsRef>;

/** The attributes that may be stored in parts, each under the reference attribute `<name>Parts`. */
export const SPILLABLE = ['request', 'plan', 'assignment', 'outcome', 'answer'] as const;
export type Spillable = (typeof SPILLABLE)[number];

/** Name of the attribute holding the reference. @example partsAttribute('outcome') // 'outcomeParts' */
export const partsAttribute = (name: Spillable): `${Spillable}Parts` => `${name}Parts`;

/**
 * The sort-key prefix of an attribute's parts: `PART#<owner sort key>#<attribute>#` plus an
 * optional tag (the generation of an outcome, so each generation's parts are apart).
 *
 * @example
 * partsPrefix('SUB#B', 'outcome', '000002') // 'PART#SUB#B#outcome#000002#'
 */
export const partsPrefix = (ownerSk: string, name: Spillable, tag?: string): string =>
  `${SORT_KEYS.partPrefix}${ownerSk}#${name}#${tag === undefined ? '' : `${tag}#`}`;

/** One part item. */
export interface PartItem {
  readonly pk: string;
  readonly sk: string;
  readonly entity: 'part';
  readonly data: Uint8Array;
}

/** An item with some attributes moved out, and the part items that hold them. */
export interface Spilled<Item> {
  readonly item: Item;
  readonly parts: readonly PartItem[];
}

/**
 * Cuts one value into part items under `prefix`.
 *
 * @example
 * const { ref, parts } = toParts('T#a#R#r', 'PART#META#request#', request);
 */
export const toParts = (pk: string, prefix: string, value: unknown): { ref: PartsRef; parts: PartItem[] } => {
  const packed = gzipSync(Buffer.from(JSON.stringify(value), 'utf8'));
  const parts: PartItem[] = [];
  for (let offset = 0, index = 0; offset < packed.length || index === 0; offset += PART_BYTES, index += 1) {
    parts.push({ pk, sk: `${prefix}${String(index).padStart(4, '0')}`, entity: 'part', data: new Uint8Array(packed.subarray(offset, offset + PART_BYTES)) });
  }
  return { ref: { prefix, count: parts.length, bytes: packed.length, sha256: createHash('sha256').update(packed).digest('hex') }, parts };
};

/** True when a value is too large to stay inline. */
export const needsParts = (value: unknown): boolean => value !== undefined && valueSize(value) > INLINE_VALUE_BYTES;

/**
 * Moves each named attribute of `item` that is larger than {@link INLINE_VALUE_BYTES} into
 * parts; an item with only small attributes is returned unchanged with no parts.
 *
 * @example
 * const { item, parts } = spill(subtask, ['assignment'], (name) => partsPrefix('SUB#B', name));
 */
export const spill = <Item extends { pk: string }>(item: Item, names: readonly Spillable[], prefixOf: (name: Spillable) => string): Spilled<Item> => {
  const out: Record<string, unknown> = { ...item };
  const parts: PartItem[] = [];
  for (const name of names) {
    if (!needsParts(out[name])) continue;
    const cut = toParts(item.pk, prefixOf(name), out[name]);
    delete out[name];
    out[partsAttribute(name)] = cut.ref;
    parts.push(...cut.parts);
  }
  return { item: out as Item, parts };
};

/** The Puts of a spill's parts for a transaction. Unconditional: a part's content is fixed by its prefix. */
export const partPuts = (parts: readonly PartItem[]): LedgerTransactItem[] => parts.map((item) => ({ kind: 'put', item: { ...item } }));

const dataOf = (item: Record<string, unknown>): Uint8Array | undefined => (item.data instanceof Uint8Array ? item.data : undefined);

/**
 * Reassembles one attribute from its parts (any superset of them may be passed: they are
 * picked by prefix). A missing part or a checksum mismatch is `CorruptItem`.
 *
 * @example
 * const request = fromParts(ref, partitionItems, context);
 */
export const fromParts = (ref: PartsRef, items: readonly Record<string, unknown>[], context: LedgerErrorContext): unknown => {
  const mine = items.filter((item) => String(item.sk).startsWith(ref.prefix)).sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : 1));
  const chunks = mine.map(dataOf);
  const packed = Buffer.concat(chunks.filter((chunk): chunk is Uint8Array => chunk !== undefined));
  const hash = createHash('sha256').update(packed).digest('hex');
  if (mine.length !== ref.count || chunks.includes(undefined) || packed.length !== ref.bytes || hash !== ref.sha256) {
    throw new CorruptItem({
      ...context,
      key: ref.prefix,
      issues: [`expected ${ref.count} parts of ${ref.bytes} bytes, found ${mine.length} parts of ${packed.length} bytes`],
    });
  }
  return JSON.parse(gunzipSync(packed).toString('utf8')) as unknown;
};

/**
 * Puts every spilled attribute of a stored image back from `parts` (items of the same
 * partition), removing the references. An image with no references is returned as is.
 *
 * @example
 * const whole = unspill(image, partitionItems, context);
 */
export const unspill = (image: Record<string, unknown>, parts: readonly Record<string, unknown>[], context: LedgerErrorContext): Record<string, unknown> => {
  if (!SPILLABLE.some((name) => image[partsAttribute(name)] !== undefined)) return image;
  const out: Record<string, unknown> = { ...image };
  for (const name of SPILLABLE) {
    const raw = out[partsAttribute(name)];
    if (raw === undefined) continue;
    const ref = PartsRef.safeParse(raw);
    if (!ref.success) throw new CorruptItem({ ...context, key: String(image.sk), issues: [`${partsAttribute(name)} is not a parts reference`] });
    out[name] = fromParts(ref.data, parts, context);
    delete out[partsAttribute(name)];
  }
  return out;
};

/** The prefixes an image refers to, for a targeted read of its parts. */
export const referencedPrefixes = (image: Record<string, unknown>): string[] =>
  SPILLABLE.flatMap((name) => {
    const ref = PartsRef.safeParse(image[partsAttribute(name)]);
    return ref.success ? [ref.data.prefix] : [];
  });

/**
 * {@link unspill} for an image read on its own (GetItem, UpdateItem): reads the parts it refers
 * to, one paginated Query per spilled attribute. An image without references costs nothing more.
 *
 * @example
 * const whole = await withParts(ctx, await getItem(ctx, key), context);
 */
export const withParts = async (ctx: LedgerContext, image: Record<string, unknown>, context: LedgerErrorContext): Promise<Record<string, unknown>> => {
  const prefixes = referencedPrefixes(image);
  if (prefixes.length === 0) return image;
  const parts = (await Promise.all(prefixes.map((prefix) => queryPartition(ctx, String(image.pk), prefix)))).flat();
  return unspill(image, parts, context);
};

/**
 * The parts a set of images refers to, starting from those a partition read already holds.
 * A Query of many pages is not a snapshot: parts sort before the items that own them (`PART#` <
 * `RUN` < `SUB#`), so a page can show a reference written after an earlier page was read. Parts
 * never change and are written with their reference, so reading a missing prefix again after
 * seeing the reference always finds them.
 *
 * @example
 * const parts = await completeParts(ctx, pk, items, items.filter(isPart));
 */
export const completeParts = async (
  ctx: LedgerContext,
  pk: string,
  images: readonly Record<string, unknown>[],
  parts: readonly Record<string, unknown>[],
): Promise<Record<string, unknown>[]> => {
  const missing = images.flatMap((image) =>
    SPILLABLE.flatMap((name) => {
      const ref = PartsRef.safeParse(image[partsAttribute(name)]);
      if (!ref.success) return [];
      const found = parts.filter((part) => String(part.sk).startsWith(ref.data.prefix)).length;
      return found === ref.data.count ? [] : [ref.data.prefix];
    }),
  );
  if (missing.length === 0) return [...parts];
  const reread = (await Promise.all(missing.map((prefix) => queryPartition(ctx, pk, prefix)))).flat();
  return [...parts.filter((part) => !missing.some((prefix) => String(part.sk).startsWith(prefix))), ...reread];
};
