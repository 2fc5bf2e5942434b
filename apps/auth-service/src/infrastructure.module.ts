import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { createKafka, KafkaEventPublisher } from '@invoicing/event-bus';
import { Logger } from '@nestjs/common';
import { Clock, SystemClock } from './common/clock';
import { AUTH_CONFIG, AuthConfig } from './config/config';
import { authDataSourceOptions } from './database/data-source';
import { EVENT_PUBLISHER } from './revocation/outbox-relay';
import { parseRedisUrl } from './config/redis-url';
import { createRedisClient, RedisClient } from './sessions/redis-connection';
import { REDIS } from './sessions/session-store';

/** Connections to Postgres, Redis and Kafka, built from the validated configuration. */
@Global()
@Module({})
export class InfrastructureModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  static forRoot(config: AuthConfig) {
    const logger = new Logger('kafka');
    return {
      module: InfrastructureModule,
      imports: [TypeOrmModule.forRoot(authDataSourceOptions(config.DATABASE_URL, config.DATABASE_POOL_SIZE))],
      providers: [
        { provide: AUTH_CONFIG, useValue: config },
        { provide: Clock, useClass: SystemClock },
        {
          provide: REDIS,
          // One Redis or a Redis Cluster (ADR 0018); both fail fast while Redis is down (the API
          // answers 503) instead of queueing requests, and auto-pipeline (redis-connection.ts).
          useFactory: (): Promise<RedisClient> => createRedisClient(parseRedisUrl(config.REDIS_URL)),
        },
        {
          provide: EVENT_PUBLISHER,
          useFactory: () =>
            new KafkaEventPublisher(
              createKafka({
                brokers: config.KAFKA_BROKERS,
                clientId: 'auth-service',
                log: (level, message, extra) => logger[level]({ msg: `kafka: ${message}`, ...extra }),
              }),
            ),
        },
      ],
      exports: [AUTH_CONFIG, Clock, REDIS, EVENT_PUBLISHER],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
