import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session's optional outbound proxy (issue 19 item 10): `proxy_url` holds the URL sealed with SecretBox (it may carry
 * credentials; only the gateway that connects the session opens it), `proxy_url_shown` the same URL with its
 * credentials masked, which the API shows. Both NULL: the session connects directly.
 */
export class SessionProxy1795639128968 implements MigrationInterface {
  name = 'SessionProxy1795639128968';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions ADD COLUMN proxy_url text, ADD COLUMN proxy_url_shown text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions DROP COLUMN proxy_url, DROP COLUMN proxy_url_shown');
  }
}
