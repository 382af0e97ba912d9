import prand from 'pure-rand';

/**
 * The simulation's one seeded random stream. Every random choice of every participant (the
 * price walk, the keeper, the traders, the admin) draws from it in block order, so a seed
 * always yields the same chain.
 */
export class Random {
  private readonly rng: prand.RandomGenerator;

  constructor(seed: number) {
    this.rng = prand.xoroshiro128plus(seed);
  }

  int(min: number, max: number): number {
    return prand.unsafeUniformIntDistribution(min, max, this.rng);
  }

  chance(p: number): boolean {
    return this.int(0, 999_999) < p * 1_000_000;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }
}
