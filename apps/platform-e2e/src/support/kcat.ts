import { CloudEvent, Kafka } from 'cloudevents';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { STACK } from './platform';

const run = promisify(execFile);
const TOPIC = 'auth.revocations.v1';

/** One record as `kcat -J` prints it (headers are a flat [name, value, name, value, ...] list). */
interface KcatRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  headers?: string[];
  payload: string | null;
}

/**
 * Reads `auth.revocations.v1` with kcat, as an operator or a non-Node subscriber would, from the
 * given time (`-o s@<ms>`, every partition) to the end (`-e`), and decodes every record of the given
 * key with the CloudEvents SDK's Kafka binding (structured mode, `content-type:
 * application/cloudevents+json`), then validates it against the CloudEvents 1.0 spec. Polls until at
 * least one event is there or `waitMs` has passed. kcat comes from tools/setup.sh (apt-get).
 */
export function readRevocationsWithKcat(apiKeyId: string, sinceMs: number, waitMs = 15000): Promise<CloudEvent<unknown>[]> {
  return readTopicWithKcat(TOPIC, apiKeyId, sinceMs, waitMs);
}

/** As {@link readRevocationsWithKcat}, for any topic of CloudEvents (the audit stream, keyed by organization). */
export async function readTopicWithKcat(topic: string, key: string, sinceMs: number, waitMs = 15000, atLeast = 1): Promise<CloudEvent<unknown>[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { stdout } = await run('kcat', ['-C', '-b', STACK.kafkaBrokers, '-t', topic, '-o', `s@${sinceMs}`, '-e', '-J', '-q'], { timeout: 30000 }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') throw new Error('kcat is not installed: run tools/setup.sh (apt-get install kcat)');
        throw error;
      },
    );
    const records = stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as KcatRecord)
      .filter((r) => r.key === key && r.payload !== null);
    if (records.length >= atLeast || Date.now() > deadline) return records.map(toCloudEvent);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function toCloudEvent(record: KcatRecord): CloudEvent<unknown> {
  const headers: Record<string, string> = {};
  const list = record.headers ?? [];
  for (let i = 0; i + 1 < list.length; i += 2) headers[list[i].toLowerCase()] = list[i + 1];
  const decoded = Kafka.toEvent({ headers, key: record.key ?? '', value: record.payload, body: record.payload } as Parameters<typeof Kafka.toEvent>[0]);
  if (!(decoded instanceof CloudEvent)) throw new Error(`expected one structured-mode event at ${record.partition}/${record.offset}`);
  // The Kafka binding builds the event without checking it; validate() throws a ValidationError
  // listing what breaks the CloudEvents 1.0 schema (required attributes, formats).
  decoded.validate();
  return decoded;
}
