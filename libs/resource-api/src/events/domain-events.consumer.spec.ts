import { buildAsyncApiDocument, DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, ORGANIZATION_PROFILE_CHANGED_V1 } from '@invoicing/contracts';
import type { IncomingMessage, KafkaEventTransport } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import type { ReferenceResolver } from '../references/known-objects';
import type { ResourceDefinition } from '../resources/resource-definition';
import { DomainEventsConsumer } from './domain-events.consumer';

/** The AsyncAPI document's example of a type: a valid event of it, as published. */
function example(type: string): Record<string, unknown> {
  const messages = (buildAsyncApiDocument() as { components: { messages: Record<string, { examples: Array<{ payload: Record<string, unknown> }> }> } }).components.messages;
  return messages[type].examples[0].payload;
}

const message = (value: unknown): IncomingMessage => ({ topic: DOMAIN_TOPIC, partition: 0, offset: '7', key: null, value: Buffer.from(JSON.stringify(value)), timestamp: 0 }) as unknown as IncomingMessage;

describe(DomainEventsConsumer.name, () => {
  /** A service that keeps clients in its read model (as the invoice service does). */
  function consumer() {
    const remember = jest.fn().mockResolvedValue(undefined);
    const db = { transaction: jest.fn(async (work: (tx: unknown) => Promise<void>) => work({})) };
    const transport = { subscribe: jest.fn() } as unknown as KafkaEventTransport;
    const def = { references: ['client'] } as unknown as ResourceDefinition;
    const subject = new DomainEventsConsumer(def, db as unknown as DataSource, { remember } as unknown as ReferenceResolver, transport, { service: 'test-service', maxWaitTimeInMs: 100 });
    const error = jest.fn();
    Object.assign(subject, { logger: { error, warn: jest.fn() } });
    return { subject, db, remember, error };
  }

  it('keeps an object it references, and skips an organization\'s profile change quietly: it feeds no read model', async () => {
    const { subject, db, remember, error } = consumer();
    await subject.handle(message(example(ORGANIZATION_PROFILE_CHANGED_V1)));
    expect(db.transaction).not.toHaveBeenCalled();
    expect(error).not.toHaveBeenCalled();
    await subject.handle(message(example(DOMAIN_EVENT_TYPES.client)));
    expect(remember).toHaveBeenCalledTimes(1);
    expect(remember.mock.calls[0][1]).toBe('client');
  });

  it('still logs a malformed event of the topic, a broken profile change included', async () => {
    const { subject, db, error } = consumer();
    await subject.handle(message({ ...example(ORGANIZATION_PROFILE_CHANGED_V1), data: {} }));
    await subject.handle(message('not an event'));
    expect(db.transaction).not.toHaveBeenCalled();
    expect(error).toHaveBeenCalledTimes(2);
    expect(error.mock.calls[0][0]).toMatchObject({ msg: 'domain event rejected', offset: '7' });
  });
});
