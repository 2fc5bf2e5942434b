/** Slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16384;

/**
 * The Redis Cluster slot of a key: CRC16 (XMODEM) of the key, or of its hash tag (what stands
 * between the first `{` and the next `}`, when that is not empty), modulo 16384. As Redis computes it
 * (`CLUSTER KEYSLOT`); the specs use it to prove that every command's keys share one slot.
 */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(key, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % CLUSTER_SLOTS;
}
