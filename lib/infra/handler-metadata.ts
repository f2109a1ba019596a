/**
 * CloudFormation metadata key on every tessera `AWS::Lambda::Function`: the handler's entry path
 * relative to the repository root. The CDK construct writes it and the local cloud reads it to
 * map a function of the synthesized template to the module it runs, so it is an interface, not
 * decoration. It lives in its own module so the local cloud can import it without the CDK.
 *
 * @example
 * (fn.node.defaultChild as CfnResource).addMetadata(HANDLER_METADATA_KEY, 'functions/dispatch.ts');
 */
export const HANDLER_METADATA_KEY = 'tessera:handler';
