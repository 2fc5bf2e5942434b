import { Column, Entity } from 'typeorm';
import { OrganizationOwned } from '@invoicing/service-kit';

/** A person who uses the settings area; belongs to one organization. */
@Entity({ schema: 'auth', name: 'users' })
export class UserEntity extends OrganizationOwned {
  /** Stored lower-cased; unique. */
  @Column('text')
  email!: string;

  /** Argon2id PHC string. */
  @Column('text', { name: 'password_hash' })
  passwordHash!: string;
}
