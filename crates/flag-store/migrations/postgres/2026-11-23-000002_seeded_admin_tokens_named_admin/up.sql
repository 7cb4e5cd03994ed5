-- Tokens from INIT_ADMIN_API_TOKENS are named `admin`, as Unleash names them; earlier ones were
-- numbered. Writes already recorded keep the name they were made under.
UPDATE api_tokens SET token_name = 'admin'
WHERE token_type = 'admin' AND token_name LIKE 'init-admin-token-%';
