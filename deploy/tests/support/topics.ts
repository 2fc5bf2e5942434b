import { buildAsyncApiDocument } from '@invoicing/contracts';

/** A topic creation found in a setup script (compose's kafka-topics service, the Kubernetes Job). */
export interface TopicCreation {
  topic: string;
  partitions: number;
  configs: Record<string, string>;
}

/** Parses every `kafka-topics.sh ... --create ... --topic T` command of a shell script. */
export function topicCreations(script: string): TopicCreation[] {
  const commands = script.replace(/\\\n\s*/g, ' ').split('\n');
  return commands
    .filter((c) => c.includes('kafka-topics.sh') && c.includes('--create'))
    .map((c) => {
      const words = c.trim().split(/\s+/);
      const after = (flag: string) => words[words.indexOf(flag) + 1];
      const configs = Object.fromEntries(
        words.flatMap((w, i) => (w === '--config' ? [words[i + 1].split('=') as [string, string]] : [])),
      );
      return { topic: after('--topic'), partitions: Number(after('--partitions')), configs };
    });
}

/**
 * What the AsyncAPI document tells subscribers of each topic (its Kafka channel binding), in the
 * shape of a TopicCreation: a setup script must create the topics exactly so.
 */
export function topicsOfAsyncApi(): TopicCreation[] {
  const doc = buildAsyncApiDocument() as {
    channels: Record<string, { address: string; bindings: { kafka: { partitions: number; topicConfiguration: Record<string, unknown> } } }>;
  };
  return Object.values(doc.channels).map(({ address, bindings: { kafka } }) => ({
    topic: address,
    partitions: kafka.partitions,
    configs: Object.fromEntries(Object.entries(kafka.topicConfiguration).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)])),
  }));
}

/** A creation's configs limited to those the AsyncAPI document states (the others, such as min.insync.replicas, are the deployment's). */
export function asStated(created: TopicCreation, stated: TopicCreation): TopicCreation {
  return { topic: created.topic, partitions: created.partitions, configs: Object.fromEntries(Object.keys(stated.configs).map((k) => [k, created.configs[k]])) };
}
