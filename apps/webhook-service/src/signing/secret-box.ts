import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Endpoint signing secrets at rest. They cannot be hashed, as API keys are: the service must sign
 * with them. So they are sealed with AES-256-GCM under WEBHOOK_SECRETS_KEY (a dump of the database
 * alone reveals none), with the endpoint's id as associated data: a sealed secret copied onto
 * another endpoint's row does not open.
 */
export class SecretBox {
  private static readonly VERSION = 1;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(plain: Buffer, boundTo: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(boundTo));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([Buffer.from([SecretBox.VERSION]), iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer, boundTo: string): Buffer {
    if (sealed[0] !== SecretBox.VERSION || sealed.length < 29) throw new Error('sealed secret: unknown format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(1, 13));
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(sealed.subarray(13, 29));
    return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]);
  }
}
