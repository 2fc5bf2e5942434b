import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A person who uses the settings area; belongs to one organization. */
@Entity({ schema: 'auth', name: 'users' })
export class UserEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  /** Stored lower-cased; unique. */
  @Column('text')
  email!: string;

  /** Argon2id PHC string. */
  @Column('text', { name: 'password_hash' })
  passwordHash!: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
