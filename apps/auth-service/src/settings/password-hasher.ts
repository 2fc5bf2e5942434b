import { Injectable } from '@nestjs/common';
import { Algorithm, hash, verify } from '@node-rs/argon2';

/**
 * Argon2id, memory-hard (OWASP's recommended parameters: 19 MiB, 2 iterations, 1 lane). A login for
 * an unknown email still verifies against a dummy hash, so both answers take the same time.
 */
@Injectable()
export class PasswordHasher {
  private static readonly OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 };
  private dummy: Promise<string> | null = null;

  hash(password: string): Promise<string> {
    return hash(password, PasswordHasher.OPTIONS);
  }

  async verify(stored: string | null, password: string): Promise<boolean> {
    if (stored === null) {
      this.dummy ??= this.hash('dummy password for timing');
      await verify(await this.dummy, password);
      return false;
    }
    return verify(stored, password);
  }
}
