/** Time source, injectable so that tests can move past the 30-day refresh-token lifetime. */
export abstract class Clock {
  abstract now(): number;
}

export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
}
