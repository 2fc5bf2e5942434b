import { FieldErrors } from '@invoicing/service-kit';
import { ProblemException } from '@invoicing/service-kit';
import { calculateInvoice } from './invoice-calculation';

describe(calculateInvoice.name, () => {
  it('computes per-line amount and tax with half-up rounding, then the totals', () => {
    const errors = new FieldErrors();
    const totals = calculateInvoice(
      [
        { description: 'Consulting', quantity: 1.5, unit_price: 10001, tax_rate_bps: 2000 },
        { description: 'Hosting', quantity: '3', unit_price: 999, tax_rate_bps: 700 },
        { description: 'Tiny', quantity: '0.001', unit_price: 500 },
      ],
      errors,
    );
    errors.throwIfAny();
    expect(totals.lines.map((l) => [l.amount, l.tax])).toEqual([
      [15002, 3000], // 15001.5 → 15002; 3000.4 → 3000
      [2997, 210], // 209.79 → 210
      [1, 0], // 0.5 → 1; no tax rate → 0
    ]);
    expect(totals).toMatchObject({ subtotal: 18000, taxTotal: 3210, total: 21210 });
  });

  it('fills description, price and tax rate from a product', () => {
    const errors = new FieldErrors();
    const products = new Map([['prd_1', { description: 'Widget', unit_price: 250, tax_rate_bps: 1000 }]]);
    const totals = calculateInvoice([{ quantity: 2, product_id: 'prd_1' }], errors, products);
    errors.throwIfAny();
    expect(totals.lines[0]).toMatchObject({ description: 'Widget', unit_price: 250, amount: 500, tax: 50 });
  });

  it('names each invalid line field', () => {
    const errors = new FieldErrors();
    calculateInvoice([{ quantity: 0 }, { description: 'x', quantity: 1.2345, unit_price: 1 }], errors);
    try {
      errors.throwIfAny();
      throw new Error('expected errors');
    } catch (e) {
      expect((e as ProblemException).errors?.map((x) => x.field)).toEqual([
        'line_items[0].quantity',
        'line_items[0].description',
        'line_items[0].unit_price',
        'line_items[1].quantity',
      ]);
    }
  });
});
