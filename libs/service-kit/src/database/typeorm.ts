import { DataSource, DataSourceOptions } from 'typeorm';

type PostgresDataSourceOptions = Extract<DataSourceOptions, { type: 'postgres' }>;

export interface PostgresOptions {
  url: string;
  /** The service's own schema; also where TypeORM keeps its `migrations` table. */
  schema: string;
  entities: NonNullable<PostgresDataSourceOptions['entities']>;
  migrations: NonNullable<PostgresDataSourceOptions['migrations']>;
  applicationName: string;
  poolSize?: number;
}

/**
 * TypeORM options for a service's schema. `synchronize` is off for good: schema changes are
 * migrations, run by the `migrate` command with the schema owner's role, never by the app role.
 */
export function postgresOptions(o: PostgresOptions): DataSourceOptions {
  return {
    type: 'postgres',
    url: o.url,
    schema: o.schema,
    entities: o.entities,
    migrations: o.migrations,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    applicationName: o.applicationName,
    poolSize: o.poolSize ?? 10,
    extra: {
      connectionTimeoutMillis: 3000,
      // A stuck query must not hold a request (and a pool slot) forever.
      statement_timeout: 10000,
      options: `-c search_path=${o.schema}`,
    },
  };
}

/** Applies pending migrations, each in its own transaction; returns their names. */
export async function runMigrations(options: DataSourceOptions): Promise<string[]> {
  const dataSource = new DataSource(options);
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}

/** Readiness probe for a pool: one round trip. */
export async function pingDatabase(dataSource: DataSource): Promise<boolean> {
  if (!dataSource.isInitialized) return false;
  await dataSource.query('SELECT 1');
  return true;
}
