/** Errors of the local cloud. Each says what to do, in one line, because people read them in a terminal. */

export class LocalCloudError extends Error {
  override readonly name: string = 'LocalCloudError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Java 17+ is needed for DynamoDB Local and was not found. */
export class JavaMissingError extends LocalCloudError {
  override readonly name = 'JavaMissingError';
  constructor(readonly found: string | undefined) {
    super(
      found === undefined
        ? 'tessera: DynamoDB Local needs Java 17 or newer, and `java` was not found on PATH. Install it (Debian/Ubuntu: `sudo apt-get install -y openjdk-17-jre-headless`; macOS: `brew install openjdk@17`) and try again.'
        : `tessera: DynamoDB Local needs Java 17 or newer, but \`java -version\` reports ${found}. Install Java 17+ (Debian/Ubuntu: \`sudo apt-get install -y openjdk-17-jre-headless\`) and put it first on PATH.`,
    );
  }
}

/** A local emulator did not become ready in time. */
export class EmulatorStartError extends LocalCloudError {
  override readonly name = 'EmulatorStartError';
}
