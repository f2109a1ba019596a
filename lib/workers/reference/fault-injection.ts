/**
 * The environment variable that opts a deployment into the fault-injection worker kind. It lives
 * apart from the kinds so the CDK construct can import the name without importing worker code.
 */
export const FAULT_INJECTION_ENV = 'TESSERA_FAULT_INJECTION';
