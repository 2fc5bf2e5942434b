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
