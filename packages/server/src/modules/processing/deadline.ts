import { processingTimedOut } from '@lamina/domain';
import { SlideRejectedError } from './slideInfo.js';

/**
 * The time budget of one processing job (PROCESSING_TIME_LIMIT): checked between steps and handed
 * to libvips as sharp's `timeout`, so a slide that would keep the worker busy for hours fails with
 * a clear message instead (FAIL_PROCESSING, not retried).
 */
export class Deadline {
  private readonly at: number;

  constructor(
    readonly seconds: number,
    now = Date.now(),
  ) {
    this.at = now + seconds * 1000;
  }

  get expired(): boolean {
    return Date.now() >= this.at;
  }

  /** Whole seconds left, at least 1 (sharp's `timeout` takes whole seconds; 0 would mean none). */
  remainingSeconds(): number {
    return Math.max(1, Math.ceil((this.at - Date.now()) / 1000));
  }

  error(): SlideRejectedError {
    return new SlideRejectedError(processingTimedOut(this.seconds));
  }

  /** Throws the time-limit error when the budget is spent. */
  check(): void {
    if (this.expired) throw this.error();
  }
}
