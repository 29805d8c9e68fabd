import { formatEther } from 'viem';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';

export const TOKEN = 'ONS';
export const DECIMALS = 18;

/** The current price of one action (docs/ebus.md, "Fees"). */
export interface FeeQuote {
  token: string;
  decimals: number;
  fixed_fee_wei: string;
  proving_fee_wei: string;
  total_fee_wei: string;
  total_fee: string;
  when_updated: string;
}

/**
 * Where the recent average batch size comes from: the batches feature reads its sealed
 * batches. Before the first is sealed (or with `noBatchesYet`) it answers null and the fee
 * assumes full batches of `BATCH_MAX_ACTIONS`.
 */
export interface BatchSizeSource {
  /** Mean actions per batch over the last `windowBatches` sealed batches; null if none. */
  recentAverageBatchSize(windowBatches: number): Promise<number | null>;
}

export const noBatchesYet: BatchSizeSource = { recentAverageBatchSize: async () => null };

/** How long a computed quote is served before it is recomputed. */
const QUOTE_TTL_MS = 5_000;

/**
 * Fee = fixed part + proving cost per batch ÷ recent average batch size. The quote is
 * computed at most every QUOTE_TTL_MS, so pricing costs nothing on the hot path; prepare
 * and execute read the same cached quote, so a prepared price holds unless it moved.
 */
export class FeeService {
  private cached: { quote: FeeQuote; totalWei: bigint; at: number } | null = null;
  private pending: Promise<FeeQuote> | null = null;

  constructor(
    private readonly config: Pick<Config, 'fees' | 'batches'>,
    private readonly clock: Clock,
    private readonly batchSizes: BatchSizeSource = noBatchesYet,
  ) {}

  /** The current quote (cached). */
  async quote(): Promise<FeeQuote> {
    const c = this.cached;
    if (c && performance.now() - c.at < QUOTE_TTL_MS) return c.quote;
    this.pending ??= this.compute().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  /** The current total fee in wei. */
  async totalWei(): Promise<bigint> {
    await this.quote();
    return this.cached!.totalWei;
  }

  /** The current total fee if a fresh quote is cached (no await on the hot path), else null. */
  cachedTotalWei(): bigint | null {
    const c = this.cached;
    return c && performance.now() - c.at < QUOTE_TTL_MS ? c.totalWei : null;
  }

  /** Drop the cached quote (tests; a config change). */
  invalidate(): void {
    this.cached = null;
  }

  private async compute(): Promise<FeeQuote> {
    const { fixedWei, provingCostPerBatchWei, windowBatches } = this.config.fees;
    const measured = await this.batchSizes.recentAverageBatchSize(windowBatches);
    const average = measured !== null && measured >= 1 ? measured : this.config.batches.maxActions;
    // Integer wei: the proving share rounds down (the network absorbs the remainder). The
    // average enters in thousandths, so a mean of 3.5 actions is not priced as 4.
    const milliActions = BigInt(Math.max(1_000, Math.round(average * 1_000)));
    const provingWei = (provingCostPerBatchWei * 1_000n) / milliActions;
    const totalWei = fixedWei + provingWei;
    const quote: FeeQuote = {
      token: TOKEN,
      decimals: DECIMALS,
      fixed_fee_wei: fixedWei.toString(),
      proving_fee_wei: provingWei.toString(),
      total_fee_wei: totalWei.toString(),
      total_fee: formatEther(totalWei),
      when_updated: this.clock.now().toISOString(),
    };
    this.cached = { quote, totalWei, at: performance.now() };
    return quote;
  }
}
