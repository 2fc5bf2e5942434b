import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The parties of an invoice as they stood when it was created, for its documents (the PDF and the
 * EN 16931 e-invoice): an invoice is a legal document, and a later change of the seller's address
 * or of the client must not change it.
 *
 * - `organization_profiles`: each organization's latest profile (Settings → Organization) as the
 *   auth service announces it on the domain topic (`organization_profile_changed.v1`), the highest
 *   `version` kept (events can arrive again, and out of order).
 * - `invoice_parties`: per invoice, the seller (that profile, with its version) and the buyer (the
 *   client as the read model knew it), written by a trigger in the statement that inserts the
 *   invoice: no round trip more for a create, and no code path can insert an invoice without them.
 *   The client is always in the read model by then (the create has just required it). A side table
 *   rather than columns of `invoices`: list pages read every column of their rows, and would carry
 *   a few KiB of parties per invoice past LIST_PAGE_MAX_BYTES.
 * - Invoices created before this migration get their buyer from the read model now and no seller:
 *   their documents print without a seller block (the e-invoice answers 422).
 */
export class InvoiceParties1764500000000 implements MigrationInterface {
  name = 'InvoiceParties1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE invoices.organization_profiles (
        organization_id uuid PRIMARY KEY,
        version integer NOT NULL CHECK (version > 0),
        profile jsonb NOT NULL,
        changed_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE invoices.invoice_parties (
        invoice_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        seller jsonb,
        seller_version integer,
        buyer jsonb
      )`);
    await q.query(`
      CREATE FUNCTION invoices.record_invoice_parties() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog AS $$
      BEGIN
        INSERT INTO invoices.invoice_parties (invoice_id, organization_id, seller, seller_version, buyer)
        SELECT NEW.id, NEW.organization_id,
               (SELECT p.profile FROM invoices.organization_profiles p WHERE p.organization_id = NEW.organization_id),
               (SELECT p.version FROM invoices.organization_profiles p WHERE p.organization_id = NEW.organization_id),
               (SELECT k.data FROM invoices.known_objects k WHERE k.kind = 'client' AND k.id = NEW.client_id AND k.organization_id = NEW.organization_id);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER invoices_record_parties AFTER INSERT ON invoices.invoices
      FOR EACH ROW EXECUTE FUNCTION invoices.record_invoice_parties()`);
    await q.query(`
      INSERT INTO invoices.invoice_parties (invoice_id, organization_id, buyer)
      SELECT i.id, i.organization_id, k.data FROM invoices.invoices i
        LEFT JOIN invoices.known_objects k ON k.kind = 'client' AND k.id = i.client_id AND k.organization_id = i.organization_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER invoices_record_parties ON invoices.invoices`);
    await q.query(`DROP FUNCTION invoices.record_invoice_parties()`);
    await q.query(`DROP TABLE invoices.invoice_parties`);
    await q.query(`DROP TABLE invoices.organization_profiles`);
  }
}
