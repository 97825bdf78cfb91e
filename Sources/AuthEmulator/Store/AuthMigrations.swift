import HearthSQLite

/// The Auth emulator's schema. Every table is keyed by project so projects never see each other;
/// account data is also keyed by tenant (`""` for the project's own accounts, see `AuthScope`).
enum AuthMigrations {
    static let all: [Migration] = [
        Migration("auth.1", """
        CREATE TABLE auth_users (
            project_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            email TEXT,
            email_verified INTEGER,
            display_name TEXT,
            photo_url TEXT,
            phone_number TEXT,
            password_hash BLOB,
            salt BLOB,
            password_scheme TEXT,
            password_updated_at INTEGER,
            valid_since INTEGER,
            disabled INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            last_login_at INTEGER,
            last_refresh_at INTEGER,
            custom_attributes TEXT,
            providers TEXT,
            email_link_signin INTEGER NOT NULL DEFAULT 0,
            custom_auth INTEGER NOT NULL DEFAULT 0,
            initial_email TEXT,
            screen_name TEXT,
            token_epoch INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (project_id, local_id)
        ) WITHOUT ROWID;
        CREATE INDEX auth_users_email ON auth_users (project_id, email);
        CREATE INDEX auth_users_phone ON auth_users (project_id, phone_number);
        CREATE INDEX auth_users_initial_email ON auth_users (project_id, initial_email);

        CREATE TABLE auth_user_providers (
            project_id TEXT NOT NULL,
            provider_id TEXT NOT NULL,
            raw_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            email TEXT,
            PRIMARY KEY (project_id, provider_id, raw_id)
        ) WITHOUT ROWID;
        CREATE INDEX auth_user_providers_user ON auth_user_providers (project_id, local_id);
        CREATE INDEX auth_user_providers_email ON auth_user_providers (project_id, email);

        CREATE TABLE auth_refresh_tokens (
            token TEXT PRIMARY KEY,
            project_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            provider TEXT NOT NULL,
            extra_claims TEXT,
            epoch INTEGER NOT NULL,
            issued_at INTEGER NOT NULL
        );
        CREATE INDEX auth_refresh_tokens_user ON auth_refresh_tokens (project_id, local_id);

        CREATE TABLE auth_oob_codes (
            oob_code TEXT PRIMARY KEY,
            project_id TEXT NOT NULL,
            email TEXT NOT NULL,
            new_email TEXT,
            request_type TEXT NOT NULL,
            oob_link TEXT NOT NULL
        );
        CREATE INDEX auth_oob_codes_project ON auth_oob_codes (project_id);

        CREATE TABLE auth_verification_codes (
            session_info TEXT PRIMARY KEY,
            project_id TEXT NOT NULL,
            phone_number TEXT NOT NULL,
            code TEXT NOT NULL
        );
        CREATE INDEX auth_verification_codes_project ON auth_verification_codes (project_id);

        CREATE TABLE auth_project_config (
            project_id TEXT PRIMARY KEY,
            config TEXT NOT NULL
        );

        CREATE TABLE auth_signing_keys (
            kid TEXT PRIMARY KEY,
            purpose TEXT NOT NULL,
            private_key_pem TEXT NOT NULL,
            certificate_pem TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        """),
        Migration("auth.2", """
        -- Multi-tenancy: accounts and everything hanging off them gain a tenant, part of the keys
        -- (the same localId or email may exist once per tenant). Existing rows belong to the
        -- project's own accounts (tenant ''). Multi-factor enrollments live with the account.
        CREATE TABLE auth_users_v2 (
            project_id TEXT NOT NULL,
            tenant_id TEXT NOT NULL DEFAULT '',
            local_id TEXT NOT NULL,
            email TEXT,
            email_verified INTEGER,
            display_name TEXT,
            photo_url TEXT,
            phone_number TEXT,
            password_hash BLOB,
            salt BLOB,
            password_scheme TEXT,
            password_updated_at INTEGER,
            valid_since INTEGER,
            disabled INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            last_login_at INTEGER,
            last_refresh_at INTEGER,
            custom_attributes TEXT,
            providers TEXT,
            email_link_signin INTEGER NOT NULL DEFAULT 0,
            custom_auth INTEGER NOT NULL DEFAULT 0,
            initial_email TEXT,
            screen_name TEXT,
            token_epoch INTEGER NOT NULL DEFAULT 0,
            mfa_info TEXT,
            PRIMARY KEY (project_id, tenant_id, local_id)
        ) WITHOUT ROWID;
        INSERT INTO auth_users_v2 (project_id, tenant_id, local_id, email, email_verified, display_name, photo_url,
            phone_number, password_hash, salt, password_scheme, password_updated_at, valid_since, disabled, created_at,
            last_login_at, last_refresh_at, custom_attributes, providers, email_link_signin, custom_auth, initial_email,
            screen_name, token_epoch)
        SELECT project_id, '', local_id, email, email_verified, display_name, photo_url, phone_number, password_hash,
            salt, password_scheme, password_updated_at, valid_since, disabled, created_at, last_login_at, last_refresh_at,
            custom_attributes, providers, email_link_signin, custom_auth, initial_email, screen_name, token_epoch
        FROM auth_users;
        DROP TABLE auth_users;
        ALTER TABLE auth_users_v2 RENAME TO auth_users;
        CREATE INDEX auth_users_email ON auth_users (project_id, tenant_id, email);
        CREATE INDEX auth_users_phone ON auth_users (project_id, tenant_id, phone_number);
        CREATE INDEX auth_users_initial_email ON auth_users (project_id, tenant_id, initial_email);

        CREATE TABLE auth_user_providers_v2 (
            project_id TEXT NOT NULL,
            tenant_id TEXT NOT NULL DEFAULT '',
            provider_id TEXT NOT NULL,
            raw_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            email TEXT,
            PRIMARY KEY (project_id, tenant_id, provider_id, raw_id)
        ) WITHOUT ROWID;
        INSERT INTO auth_user_providers_v2 (project_id, tenant_id, provider_id, raw_id, local_id, email)
        SELECT project_id, '', provider_id, raw_id, local_id, email FROM auth_user_providers;
        DROP TABLE auth_user_providers;
        ALTER TABLE auth_user_providers_v2 RENAME TO auth_user_providers;
        CREATE INDEX auth_user_providers_user ON auth_user_providers (project_id, tenant_id, local_id);
        CREATE INDEX auth_user_providers_email ON auth_user_providers (project_id, tenant_id, email);

        -- A refresh token keeps its tenant and the second factor its session was completed with.
        ALTER TABLE auth_refresh_tokens ADD COLUMN tenant_id TEXT NOT NULL DEFAULT '';
        ALTER TABLE auth_refresh_tokens ADD COLUMN second_factor_id TEXT;
        ALTER TABLE auth_refresh_tokens ADD COLUMN second_factor_provider TEXT;
        DROP INDEX auth_refresh_tokens_user;
        CREATE INDEX auth_refresh_tokens_user ON auth_refresh_tokens (project_id, tenant_id, local_id);

        ALTER TABLE auth_oob_codes ADD COLUMN tenant_id TEXT NOT NULL DEFAULT '';
        DROP INDEX auth_oob_codes_project;
        CREATE INDEX auth_oob_codes_project ON auth_oob_codes (project_id, tenant_id);

        ALTER TABLE auth_verification_codes ADD COLUMN tenant_id TEXT NOT NULL DEFAULT '';
        DROP INDEX auth_verification_codes_project;
        CREATE INDEX auth_verification_codes_project ON auth_verification_codes (project_id, tenant_id);

        -- Tenants: the v2 Tenant resource as JSON (everything but its name).
        CREATE TABLE auth_tenants (
            project_id TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            config TEXT NOT NULL,
            PRIMARY KEY (project_id, tenant_id)
        ) WITHOUT ROWID;

        -- First factors passed by accounts with second factors, waiting for mfaSignIn:finalize.
        CREATE TABLE auth_mfa_pending (
            credential TEXT PRIMARY KEY,
            project_id TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            provider TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX auth_mfa_pending_user ON auth_mfa_pending (project_id, tenant_id, local_id);
        """),
        Migration("auth.3", """
        -- OIDC and SAML provider configurations of a project ('' tenant) or a tenant: the v2
        -- OAuthIdpConfig / InboundSamlConfig resource as JSON (everything but its name).
        CREATE TABLE auth_provider_configs (
            project_id TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            provider_id TEXT NOT NULL,
            config TEXT NOT NULL,
            PRIMARY KEY (project_id, tenant_id, kind, provider_id)
        ) WITHOUT ROWID;
        """),
    ]
}
