import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { AuthGuardModule, RevocationFeed } from '@invoicing/auth-guard';
import { connectEventTransport, createKafka, EventBusModule, KafkaEventPublisher, OutboxRelay } from '@invoicing/event-bus';
import { createServiceApp, pingDatabase, postgresOptions, ServiceApp, startServiceApp } from '@invoicing/service-kit';
import type { DataSource } from 'typeorm';
import { WebhookConfig } from './config';
import { Webhooks1764201000000 } from './database/migrations/1764201000000-webhooks';
import { Outbox1764201300000 } from './database/migrations/1764201300000-outbox';
import { ClaimIndexes1764201400000 } from './database/migrations/1764201400000-claim-indexes';
import { DeliveryWorker } from './delivery/delivery-worker';
import { ActionLimit } from './endpoints/action-limit';
import { EndpointsController } from './endpoints/endpoints.controller';
import { EndpointsService } from './endpoints/endpoints.service';
import { DomainIngest, DomainIngestController } from './events/domain-ingest';
import { EventsController } from './events/events.controller';
import { KeyChangesIngest, KeyChangesIngestController } from './events/key-ingest';
import { EventsService } from './events/events.service';
import { SecretBox } from './signing/secret-box';

export const SERVICE_NAME = 'webhook-service';
export const SCHEMA = 'webhooks';
export const MIGRATIONS = [Webhooks1764201000000, Outbox1764201300000, ClaimIndexes1764201400000];

@Module({})
class WebhookModule {
  static forRoot(config: WebhookConfig): DynamicModule {
    return {
      module: WebhookModule,
      imports: [
        TypeOrmModule.forRoot(
          postgresOptions({
            url: config.DATABASE_URL,
            schema: SCHEMA,
            entities: [],
            migrations: MIGRATIONS,
            applicationName: SERVICE_NAME,
            poolSize: config.DATABASE_POOL_SIZE,
          }),
        ),
        EventBusModule.forRoot({ brokers: config.KAFKA_BROKERS }),
        AuthGuardModule.forRoot({
          verification: { keys: config.keys, issuer: config.JWT_ISSUER, audience: config.JWT_AUDIENCE },
          revocations: { service: SERVICE_NAME, maxWaitTimeInMs: config.REVOCATION_FETCH_MAX_WAIT_MS, maxStalenessMs: config.REVOCATION_MAX_STALENESS_MS },
        }),
      ],
      controllers: [EndpointsController, EventsController, DomainIngestController, KeyChangesIngestController],
      providers: [
        { provide: WebhookConfig, useValue: config },
        { provide: SecretBox, useValue: new SecretBox(Buffer.from(config.WEBHOOK_SECRETS_KEY, 'base64url')) },
        { provide: ActionLimit, useValue: new ActionLimit(config.WEBHOOK_ACTIONS_PER_MINUTE) },
        {
          // Publishes webhooks.outbox (an endpoint disabled for failing) on webhooks.endpoints.v1.
          provide: OutboxRelay,
          useFactory: (db: DataSource) => new OutboxRelay(db, SCHEMA, new KafkaEventPublisher(createKafka({ brokers: config.KAFKA_BROKERS, clientId: `${SERVICE_NAME}-outbox` }))),
          inject: [getDataSourceToken()],
        },
        DeliveryWorker,
        EndpointsService,
        EventsService,
        DomainIngest,
        KeyChangesIngest,
      ],
    };
  }
}

/** The service, not listening, its Kafka transport connected; used by `main` and the integration tests. */
export async function createWebhookApp(config: WebhookConfig): Promise<ServiceApp> {
  const service = await createServiceApp(WebhookModule.forRoot(config), {
    service: SERVICE_NAME,
    logLevel: config.LOG_LEVEL,
    trustedProxies: config.TRUSTED_PROXIES,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
  });
  connectEventTransport(service.app);
  return service;
}

/** Listens; ready once Postgres answers and the revocation view has caught up (as every service). */
export async function startWebhookApp(service: ServiceApp, config: WebhookConfig): Promise<void> {
  const db = service.app.get<DataSource>(getDataSourceToken());
  const revocations = service.app.get(RevocationFeed);
  await startServiceApp(service, {
    port: config.PORT,
    host: config.HOST,
    shutdownGraceSeconds: config.SHUTDOWN_GRACE_SECONDS,
    readiness: { postgres: () => pingDatabase(db), revocations: () => revocations.ready },
  });
}
