/**
 * What the sheep spent and the budget it is held to (issue 35): summed after every model response
 * from pi's own usage counts, checked as the shepherd checks them (a count out of range is no count).
 * The shepherd tells the budget with each prompt (its inbox file); the sheep stops its turn itself.
 */
import { type Budget, budgetFrom, NO_SPEND, overBudget, addSpend, type Spend, spendOfUsage } from "../domain/budget.ts";
import { usageOf } from "../domain/sheep-data.ts";
import { usageOf as piUsage } from "../protocol/assistant.ts";

export class SpendWatch {
  private limit: Budget | undefined;
  private total: Spend = NO_SPEND;

  /** The budget a prompt carried (none: no limit). */
  hold(budget: unknown): void {
    this.limit = budgetFrom(budget);
  }

  get budget(): Budget | undefined {
    return this.limit;
  }

  get spent(): Spend {
    return this.total;
  }

  /** One model response's usage as pi reported it (its cost as {total}); returns why the budget is spent, once it is. */
  add(usage: unknown): string | undefined {
    this.total = addSpend(this.total, spendOfUsage(usageOf(piUsage(usage))));
    return this.over();
  }

  over(): string | undefined {
    return overBudget(this.limit, this.total);
  }

  /** A fresh conversation in the same pi is a new sheep to the herd: it spends from zero. */
  reset(): void {
    this.total = NO_SPEND;
    this.limit = undefined;
  }
}
