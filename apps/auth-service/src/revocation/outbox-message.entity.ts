import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Transactional outbox: an event is committed here first and published to Kafka by the relay, so a
 * revocation made while Kafka is unreachable is delivered when it is back.
 */
@Entity({ schema: 'auth', name: 'outbox' })
export class OutboxMessageEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  topic!: string;

  @Column('text', { name: 'message_key' })
  messageKey!: string;

  @Column('jsonb')
  payload!: Record<string, unknown>;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'published_at', nullable: true })
  publishedAt!: Date | null;

  @Column('integer')
  attempts!: number;

  @Column('text', { name: 'last_error', nullable: true })
  lastError!: string | null;

  /** The W3C trace context active when the row was written (ADR 0028); null when tracing was off. */
  @Column('jsonb', { name: 'trace_context', nullable: true })
  traceContext!: Record<string, string> | null;
}
