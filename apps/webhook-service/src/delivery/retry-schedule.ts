const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `0,5s,5m,30m,2h` → [0, 5000, 300000, 1800000, 7200000]: the delay before each attempt, counted from
 * the previous one. Null when malformed: empty, a unit missing, more than 20 attempts, or a first
 * delay that is not 0 (the first attempt is always immediate).
 */
export function parseRetrySchedule(text: string): number[] | null {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > 20) return null;
  const delays: number[] = [];
  for (const part of parts) {
    const match = /^(\d{1,9})(ms|s|m|h|d)?$/.exec(part);
    if (!match || (match[2] === undefined && match[1] !== '0')) return null;
    delays.push(Number(match[1]) * UNIT_MS[match[2] ?? 'ms']);
  }
  return delays[0] === 0 ? delays : null;
}
