import { Logger } from '@nestjs/common';
import { BaseRpcContext, CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import type { Kafka } from 'kafkajs';
import { isObservable, lastValueFrom } from 'rxjs';
import { KafkaGroupSubscriber } from '../group-subscriber';
import { BatchedMessage, createKafka, IncomingMessage, KafkaConnection } from '../kafka-client';
import { KafkaReplayingSubscriber } from '../replaying-subscriber';

/** The transport's id: `@EventPattern(topic, KAFKA_EVENTS)` binds a handler to this transport alone. */
export const KAFKA_EVENTS = Symbol('KAFKA_EVENTS');

interface SubscriptionCommon {
  /** The pattern: messages of this topic go to the `@EventPattern(topic)` handler. */
  topic: string;
  /** kafkajs client id of the subscription's connections (one client per subscription). */
  clientId: string;
  groupId: string;
  /** Upper bound on how long the broker holds a fetch open when there is no data: bounds delivery latency. */
  maxWaitTimeInMs: number;
}

/**
 * Every instance reads every message ({@link KafkaReplayingSubscriber}): its own consumer group
 * (`groupId` must differ per instance), the replay window at start, `caughtUp` and `upToDateAt`.
 */
export interface EveryInstanceSubscription extends SubscriptionCommon {
  delivery: 'every-instance';
  replayWindowMs: number;
  now?: () => number;
  /** How often the view's freshness is proven against the brokers' end offsets (the subscriber's default: 1 s). */
  checkpointIntervalMs?: number;
  /** How long a consumer may stay behind an answered checkpoint before it is replaced (the subscriber's default: 5 s). */
  stuckAfterMs?: number;
}

/** The service's instances share `groupId`: each message is handled once per service ({@link KafkaGroupSubscriber}). */
export interface OncePerServiceSubscription extends SubscriptionCommon {
  delivery: 'once-per-service';
  /**
   * The handler gets what a fetch brought of one partition as an array of {@link BatchedMessage}
   * (slices of at most BATCH_SLICE; the partitions of a fetch at the same time), to apply in one
   * transaction: one commit for many events.
   */
  batch?: boolean;
  /**
   * The broker answers a fetch once it holds this many bytes, or after `maxWaitTimeInMs`: with a
   * batch subscription, bigger batches under load at the price of up to `maxWaitTimeInMs` of latency.
   */
  minBytes?: number;
}

export type EventSubscription = EveryInstanceSubscription | OncePerServiceSubscription;

/** What a subscription's owner reads: readiness checks, the stale-view rule. */
export interface SubscriptionState {
  /** A consumer runs: Kafka answered at start. False while the transport retries, and once it is closed. */
  readonly running: boolean;
}

export interface ReplaySubscriptionState extends SubscriptionState {
  /** The running subscriber's `caughtUp` (the replay at start consumed); false while none runs. */
  readonly caughtUp: boolean;
  /** The running subscriber's `upToDateAt` (how fresh its view of the topic is); null while none runs. */
  readonly upToDateAt: number | null;
}

export interface KafkaEventTransportOptions {
  brokers: string[];
  /** Pause between attempts to start a subscription while Kafka does not answer; default 2 s. */
  retryDelayMs?: number;
  /** Builds each subscription's Kafka client; default `createKafka` (unit tests hand in a fake). */
  createKafka?: (connection: KafkaConnection) => Kafka;
}

type KafkaEventTransportEvents = {
  /** A subscription could not start (the transport retries it). */
  error: (error: unknown, topic: string) => void;
};

type KafkaEventTransportStatus = 'connecting' | 'connected' | 'disconnected';

/** The context of an event handler (`@Ctx()`): the message as the subscriber received it. */
export class KafkaEventContext extends BaseRpcContext<[IncomingMessage]> {
  getMessage(): IncomingMessage {
    return this.args[0];
  }
}

/**
 * A handler failed with something that is not an Error: Nest's exception layer answers an event
 * handler's throw with an observable that errors with `{ status, message }`, after logging the
 * original itself. Rethrown as this, the offset stays uncommitted and kafkajs delivers the message again.
 */
export class EventHandlerError extends Error {
  constructor(
    message: IncomingMessage,
    readonly reason: unknown,
  ) {
    const said = (reason as { message?: unknown } | null)?.message;
    super(`handler of ${message.topic} failed at partition ${message.partition}, offset ${message.offset}: ${typeof said === 'string' ? said : String(reason)}`);
    this.name = 'EventHandlerError';
  }
}

/** One subscription: its settings, its handler once the transport listens, and the subscriber running it. */
class Subscribed implements ReplaySubscriptionState {
  handler: MessageHandler | null = null;
  kafka: Kafka | null = null;
  replaying: KafkaReplayingSubscriber | null = null;
  group: KafkaGroupSubscriber | null = null;
  starting: Promise<void> | null = null;
  retry: NodeJS.Timeout | null = null;

  constructor(readonly spec: EventSubscription) {}

  get running(): boolean {
    return this.replaying !== null || this.group !== null;
  }

  get caughtUp(): boolean {
    return this.replaying?.caughtUp ?? false;
  }

  get upToDateAt(): number | null {
    return this.replaying?.upToDateAt ?? null;
  }
}

/**
 * Kafka for Nest handlers (ADR 0031): the subscriptions the services' providers declare
 * ({@link subscribe}) are served to `@EventPattern(<topic>)` handlers, the pattern being the topic.
 * Each subscription runs on the existing subscribers, which keep what they guarantee: a group per
 * instance and the replay window (`every-instance`), readiness and freshness, the relaunch after a
 * broker restart. Register it on the HTTP app (`connectEventTransport`, then `startAllMicroservices`).
 *
 * `listen` never waits for Kafka: each subscription is started by one connect-and-retry loop
 * (every `retryDelayMs` until the broker answers) while the app goes on starting, not ready.
 * Handlers run one message at a time per subscription, in kafkajs' order, each awaited before the
 * next; a handler that throws leaves the offset uncommitted, so the message is delivered again.
 */
export class KafkaEventTransport extends Server<KafkaEventTransportEvents, KafkaEventTransportStatus> implements CustomTransportStrategy {
  protected override readonly logger = new Logger(KafkaEventTransport.name);
  private readonly subscriptions = new Map<string, Subscribed>();
  private readonly errorListeners: Array<KafkaEventTransportEvents['error']> = [];
  private listening = false;
  private hooked = false;
  private closed = false;

  constructor(private readonly options: KafkaEventTransportOptions) {
    super();
    this.transportId = KAFKA_EVENTS;
  }

  /**
   * Declares a subscription, served once the transport listens (at once if it does already). Its
   * state is for its owner: the revocation feed reads `caughtUp` and `upToDateAt` from it.
   */
  subscribe(spec: EveryInstanceSubscription): ReplaySubscriptionState;
  subscribe(spec: OncePerServiceSubscription): SubscriptionState;
  subscribe(spec: EventSubscription): ReplaySubscriptionState {
    if (this.subscriptions.has(spec.topic)) throw new Error(`${spec.topic} is subscribed already: one subscription per topic`);
    const subscribed = new Subscribed(spec);
    const serving = this.listening && !this.closed;
    if (serving) subscribed.handler = this.handlerOf(spec.topic);
    this.subscriptions.set(spec.topic, subscribed);
    if (serving) this.start(subscribed);
    return subscribed;
  }

  /**
   * Finds each subscription's handler and starts the subscriptions in the background. Calls back
   * at once, so `startAllMicroservices` does not wait for Kafka; with an error only when a
   * subscription has no handler (a wiring mistake, which must stop the boot).
   */
  listen(callback: (error?: unknown) => void): void {
    try {
      for (const subscribed of this.subscriptions.values()) subscribed.handler = this.handlerOf(subscribed.spec.topic);
    } catch (e) {
      callback(e);
      return;
    }
    this.listening = true;
    this.closed = false;
    this._status$.next(this.subscriptions.size > 0 ? 'connecting' : 'connected');
    for (const subscribed of this.subscriptions.values()) this.start(subscribed);
    callback();
  }

  /** Stops every subscription, and the retries of those that never started. */
  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    await Promise.all(
      [...this.subscriptions.values()].map(async (subscribed) => {
        if (subscribed.retry) clearTimeout(subscribed.retry);
        subscribed.retry = null;
        await subscribed.starting;
        const running = subscribed.replaying ?? subscribed.group;
        subscribed.replaying = null;
        subscribed.group = null;
        await running?.stop();
      }),
    );
    this._status$.next('disconnected');
  }

  on<EventKey extends keyof KafkaEventTransportEvents = keyof KafkaEventTransportEvents, EventCallback extends KafkaEventTransportEvents[EventKey] = KafkaEventTransportEvents[EventKey]>(
    _event: EventKey,
    callback: EventCallback,
  ): void {
    this.errorListeners.push(callback);
  }

  /** The kafkajs clients, one per subscription started at least once. */
  unwrap<T>(): T {
    if (!this.listening) throw new Error('Not listening: call startAllMicroservices() first.');
    return [...this.subscriptions.values()].flatMap((s) => (s.kafka ? [s.kafka] : [])) as T;
  }

  private handlerOf(topic: string): MessageHandler {
    const handler = this.getHandlerByPattern(topic);
    if (!handler) throw new Error(`no @EventPattern('${topic}') handler for the subscription to ${topic}`);
    return handler;
  }

  /** The one connect-and-retry loop: an attempt now, another `retryDelayMs` after each failure. */
  private start(subscribed: Subscribed): void {
    if (this.closed || subscribed.starting || subscribed.running) return;
    subscribed.retry = null;
    subscribed.starting = this.attempt(subscribed).finally(() => {
      subscribed.starting = null;
    });
  }

  private async attempt(subscribed: Subscribed): Promise<void> {
    const { spec } = subscribed;
    let subscriber: KafkaReplayingSubscriber | KafkaGroupSubscriber | null = null;
    try {
      subscribed.kafka ??= (this.options.createKafka ?? createKafka)({
        brokers: this.options.brokers,
        clientId: spec.clientId,
        log: (level, message, extra) => this.logger[level]({ msg: `kafka: ${message}`, topic: spec.topic, ...extra }),
      });
      const handler = subscribed.handler as MessageHandler;
      const handle = (message: IncomingMessage) => this.dispatch(handler, message);
      const handleBatch = spec.delivery === 'once-per-service' && spec.batch ? (messages: BatchedMessage[]) => this.dispatchBatch(handler, messages) : undefined;
      // A new subscriber per attempt: one whose start failed may have positioned itself (an empty
      // replay window counts as caught up) without ever consuming, and must not be read.
      subscriber =
        spec.delivery === 'every-instance'
          ? new KafkaReplayingSubscriber(subscribed.kafka, {
              ...spec,
              handle,
              onStuck: ({ behind, sinceMs }) =>
                this.logger.warn({ msg: 'kafka consumer stuck behind the end offsets the brokers answered; replacing it from the replay window', topic: spec.topic, group: spec.groupId, behind, since_ms: sinceMs }),
            })
          : new KafkaGroupSubscriber(subscribed.kafka, { ...spec, handle, handleBatch });
      await subscriber.start();
    } catch (e) {
      await subscriber?.stop();
      if (this.closed) return;
      this.logger.warn({ msg: 'kafka subscription cannot reach Kafka yet; retrying', topic: spec.topic, group: spec.groupId, error: String(e) });
      for (const listener of this.errorListeners) {
        try {
          listener(e, spec.topic);
        } catch {
          // A listener's own failure must not stop the retries.
        }
      }
      subscribed.retry = setTimeout(() => this.start(subscribed), this.options.retryDelayMs ?? 2000);
      return;
    }
    if (this.closed) {
      await subscriber.stop();
      return;
    }
    if (subscriber instanceof KafkaReplayingSubscriber) subscribed.replaying = subscriber;
    else subscribed.group = subscriber;
    this.logger.log({ msg: 'kafka subscription started', topic: spec.topic, group: spec.groupId, delivery: spec.delivery });
    if ([...this.subscriptions.values()].every((s) => s.running)) this._status$.next('connected');
  }

  override setOnProcessingStartHook(hook: Parameters<Server['setOnProcessingStartHook']>[0]): void {
    super.setOnProcessingStartHook(hook);
    this.hooked = true;
  }

  override setOnProcessingEndHook(hook: Parameters<Server['setOnProcessingEndHook']>[0]): void {
    super.setOnProcessingEndHook(hook);
    this.hooked = true;
  }

  /**
   * Runs the Nest handler for one message and settles when it has: the subscriber awaits it before
   * taking the next message (order and at-least-once as before). A handler that returned normally
   * costs no rxjs; an observable (several handlers of one topic, or the exception layer's answer
   * to a throw) is awaited, and an error from it fails the message. Nest's processing hooks are
   * called only once someone set them: going through the default one cost about 1 µs a message.
   */
  private dispatch(handler: MessageHandler, message: IncomingMessage): Promise<void> {
    const context = new KafkaEventContext([message]);
    if (!this.hooked) return this.run(handler, message, context);
    // Nest's hook contract: it calls `done` and returns what it returns.
    return this.onProcessingStartHook(KAFKA_EVENTS, context, async () => {
      await this.run(handler, message, context);
      this.onProcessingEndHook?.(KAFKA_EVENTS, context);
    }) as unknown as Promise<void>;
  }

  /** A batch subscription's slice, handed to the handler as one array (no processing hooks: they are per message). */
  private async dispatchBatch(handler: MessageHandler, messages: BatchedMessage[]): Promise<void> {
    const first = messages[0];
    await this.run(handler, messages as unknown as IncomingMessage, new KafkaEventContext([first]), first);
  }

  private async run(handler: MessageHandler, message: IncomingMessage, context: KafkaEventContext, about: IncomingMessage = message): Promise<void> {
    const result = await handler(message, context);
    if (!isObservable(result)) return;
    try {
      await lastValueFrom(result, { defaultValue: undefined });
    } catch (e) {
      throw e instanceof Error ? e : new EventHandlerError(about, e);
    }
  }
}
