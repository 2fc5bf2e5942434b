import { DynamicModule, INestApplication, Module } from '@nestjs/common';
import type { INestMicroservice } from '@nestjs/common';
import type { CustomStrategy } from '@nestjs/microservices';
import { KafkaEventTransport, KafkaEventTransportOptions } from './kafka-event-transport';

/**
 * Provides the service's one {@link KafkaEventTransport} to every module (global), so that the
 * providers owning a subscription (the revocation feed, the domain-event consumer) declare it on
 * the transport the app serves. Import once in the root module.
 */
@Module({})
export class EventBusModule {
  static forRoot(options: KafkaEventTransportOptions): DynamicModule {
    return {
      module: EventBusModule,
      global: true,
      // A factory: an app made twice from one module definition (tests) gets a transport each.
      providers: [{ provide: KafkaEventTransport, useFactory: () => new KafkaEventTransport(options) }],
      exports: [KafkaEventTransport],
    };
  }
}

/**
 * Registers the app's transport on it (a hybrid app: the HTTP app stays as it is) and binds the
 * `@EventPattern` handlers of its controllers. `startAllMicroservices()` then starts it
 * (service-kit's `startServiceApp` does, after `init`); `app.close()` stops it.
 */
export function connectEventTransport(app: INestApplication): INestMicroservice {
  return app.connectMicroservice<CustomStrategy>({ strategy: app.get(KafkaEventTransport) });
}
