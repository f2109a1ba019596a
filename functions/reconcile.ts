/** Placeholder until the handler lands; the CDK construct needs the entry file to exist. */
export const handler = async (): Promise<never> => {
  throw new Error('functions/reconcile.ts is not implemented yet');
};
