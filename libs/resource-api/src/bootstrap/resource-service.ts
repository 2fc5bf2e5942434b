import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { AuthGuardModule, RevocationFeed } from '@invoicing/auth-guard';
import {
  createServiceApp,
  pingDatabase,
  postgresOptions,
  PostgresOptions,
  printJson,
  runCli,
  runMigrations,
  SERVING,
  ServiceApp,
  startServiceApp,
} from '@invoicing/service-kit';
import { connectEventTransport, createKafka, EventBusModule, KafkaEventPublisher, KafkaEventTransport, OutboxRelay } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import { referrersOfKind, representationsOf, type Resource } from '@invoicing/contracts';
import { DomainEventsConsumer, DomainEventsController } from '../events/domain-events.consumer';
import { IdempotencyStore } from '../idempotency/idempotency';
import { IdempotencyPurger } from '../idempotency/idempotency-purger';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';
import { RateLimiter } from '../rate-limit/rate-limiter';
import { ReferenceResolver } from '../references/known-objects';
import { ServiceCredentials } from '../references/service-credential';
import { ServiceCredentialGuard } from '../references/service-credential.guard';
import { InternalObjectsController, RESOURCE_SERVICE, resourceController } from '../resources/resource.controllers';
import type { ResourceDefinition } from '../resources/resource-definition';
import { ResourceService } from '../resources/resource.service';
import { loadResourceConfig, ResourceConfig, resourceEnvSpec, ResourceServiceIdentity } from './resource-config';

/** Everything that differs between two resource services. */
export interface ResourceServiceDefinition extends ResourceServiceIdentity {
  entities: PostgresOptions['entities'];
  migrations: PostgresOptions['migrations'];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- definitions differ in entity and body types
  resource: ResourceDefinition<any, any>;
}

@Module({})
class ResourceRootModule {
  static forRoot(def: ResourceServiceDefinition, config: ResourceConfig): DynamicModule {
    return {
      module: ResourceRootModule,
      imports: [
        TypeOrmModule.forRoot(
          postgresOptions({
            url: config.DATABASE_URL,
            schema: def.schema,
            entities: def.entities,
            migrations: def.migrations,
            applicationName: def.name,
            poolSize: config.DATABASE_POOL_SIZE,
          }),
        ),
        // The Kafka transport both subscriptions (revocations, domain events) are served by.
        EventBusModule.forRoot({ brokers: config.KAFKA_BROKERS }),
        AuthGuardModule.forRoot({
          verification: { keys: config.keys, issuer: config.JWT_ISSUER, audience: config.JWT_AUDIENCE },
          revocations: {
            service: def.name,
            maxWaitTimeInMs: config.REVOCATION_FETCH_MAX_WAIT_MS,
            maxStalenessMs: config.REVOCATION_MAX_STALENESS_MS,
          },
        }),
      ],
      controllers: [resourceController(def.resource.resource), InternalObjectsController, DomainEventsController],
      providers: [
        { provide: RateLimiter, useValue: new RateLimiter(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST) },
        RateLimitGuard,
        {
          provide: ServiceCredentials,
          // Accepted from the services that reference this one's objects, and no one else.
          useValue: new ServiceCredentials(config.serviceTokenRing, def.name, new Set(referrersOfKind(def.resource.kind))),
        },
        ServiceCredentialGuard,
        {
          provide: ReferenceResolver,
          useFactory: (db: DataSource, credentials: ServiceCredentials) => new ReferenceResolver(db, def.schema, config.owners, credentials),
          inject: [getDataSourceToken(), ServiceCredentials],
        },
        {
          provide: OutboxRelay,
          useFactory: (db: DataSource) =>
            new OutboxRelay(
              db,
              def.schema,
              new KafkaEventPublisher(createKafka({ brokers: config.KAFKA_BROKERS, clientId: `${def.name}-outbox` })),
            ),
          inject: [getDataSourceToken()],
        },
        {
          provide: RESOURCE_SERVICE,
          useFactory: (db: DataSource, references: ReferenceResolver, relay: OutboxRelay) =>
            new ResourceService(def.resource, db, def.schema, def.name, references, relay, {
              pageMaxBytes: config.LIST_PAGE_MAX_BYTES,
              concurrencyPerOrganization: config.LIST_CONCURRENCY_PER_ORGANIZATION,
              queuePerOrganization: config.LIST_QUEUE_PER_ORGANIZATION,
            }),
          inject: [getDataSourceToken(), ReferenceResolver, OutboxRelay],
        },
        {
          provide: IdempotencyPurger,
          useFactory: (db: DataSource) => new IdempotencyPurger(new IdempotencyStore(db, def.schema)),
          inject: [getDataSourceToken()],
        },
        {
          provide: DomainEventsConsumer,
          useFactory: (db: DataSource, references: ReferenceResolver, transport: KafkaEventTransport, relay: OutboxRelay) =>
            new DomainEventsConsumer(def.resource, db, references, transport, {
              service: def.name,
              maxWaitTimeInMs: config.REVOCATION_FETCH_MAX_WAIT_MS,
              relay,
            }),
          inject: [getDataSourceToken(), ReferenceResolver, KafkaEventTransport, OutboxRelay],
        },
      ],
    };
  }
}

/**
 * Builds a resource service (not listening), its Kafka transport connected (a hybrid app); used by
 * `main` and by integration tests. {@link startResourceApp} starts both.
 */
export async function createResourceApp(def: ResourceServiceDefinition, config: ResourceConfig): Promise<ServiceApp> {
  const service = await createServiceApp(ResourceRootModule.forRoot(def, config), {
    service: def.name,
    logLevel: config.LOG_LEVEL,
    trustedProxies: config.TRUSTED_PROXIES,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
  });
  connectEventTransport(service.app);
  varyByAccept(service.fastify, def.resource.resource);
  return service;
}

/**
 * A resource whose objects have representations besides JSON answers `GET /{id}` by Accept: every
 * answer of that route says so (`Vary: Accept`), its errors included (a 401 from the guard, the
 * deadline's 503), so that a cache in between never hands a PDF to a JSON client or the reverse.
 */
function varyByAccept(fastify: ServiceApp['fastify'], resource: Resource): void {
  if (Object.keys(representationsOf(resource)).length === 0) return;
  const route = `/api/v1/${resource}/:id`;
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (request.routeOptions.url === route) reply.header('Vary', 'Accept');
    done(null, payload);
  });
}

/**
 * Starts the Kafka subscriptions and listens; ready once Postgres answers and the revocation replay
 * has caught up, and not while the revocation view is stale (ADR 0017). Liveness never depends on
 * either.
 */
export async function startResourceApp(service: ServiceApp, config: ResourceConfig): Promise<void> {
  const db = service.app.get<DataSource>(getDataSourceToken());
  const revocations = service.app.get(RevocationFeed);
  await startServiceApp(service, {
    port: config.PORT,
    host: config.HOST,
    shutdownGraceSeconds: config.SHUTDOWN_GRACE_SECONDS,
    readiness: { postgres: () => pingDatabase(db), revocations: () => revocations.ready },
  });
}

/**
 * The whole `main.ts` of a resource service: `serve` (default), `migrate` (the schema owner's role
 * applies the migrations; the Kubernetes migration Job runs this) or `env-spec` (variables, as JSON).
 */
export function runResourceService(def: ResourceServiceDefinition, argv = process.argv.slice(2)): void {
  runCli(
    def.name,
    {
      serve: async () => {
        const config = loadResourceConfig(def);
        await startResourceApp(await createResourceApp(def, config), config);
        return SERVING;
      },
      migrate: async () => {
        const config = loadResourceConfig(def);
        const applied = await runMigrations(
          postgresOptions({
            url: config.MIGRATION_DATABASE_URL,
            schema: def.schema,
            entities: def.entities,
            migrations: def.migrations,
            applicationName: `${def.name}-migrate`,
            poolSize: 1,
          }),
        );
        return printJson({ service: def.name, migrations_applied: applied });
      },
      'env-spec': () => printJson(resourceEnvSpec(def)),
    },
    argv,
  );
}
