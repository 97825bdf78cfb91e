import HearthSQLite

/// The Auth emulator's schema. Every table is keyed by project so projects never see each other.
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
    ]
}
