// @generated automatically by Diesel CLI.

diesel::table! {
    addons (id) {
        id -> Integer,
        provider -> Text,
        description -> Nullable<Text>,
        enabled -> Bool,
        parameters -> Text,
        events -> Text,
        projects -> Text,
        environments -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    api_tokens (id) {
        id -> Integer,
        token_name -> Text,
        secret_hash -> Text,
        token_type -> Text,
        environment -> Text,
        projects -> Text,
        expires_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
        seen_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    change_request_changes (id) {
        id -> Integer,
        change_request_id -> Integer,
        feature -> Nullable<Text>,
        segment_id -> Nullable<Integer>,
        action -> Text,
        payload -> Text,
        snapshot -> Nullable<Text>,
        created_by_user_id -> Integer,
        created_at -> Timestamp,
    }
}

diesel::table! {
    change_request_comments (id) {
        id -> Integer,
        change_request_id -> Integer,
        text -> Text,
        created_by_user_id -> Integer,
        created_at -> Timestamp,
    }
}

diesel::table! {
    change_request_reviews (change_request_id, user_id, decision) {
        change_request_id -> Integer,
        user_id -> Integer,
        decision -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    change_request_settings (project, environment) {
        project -> Text,
        environment -> Text,
        required_approvals -> Integer,
    }
}

diesel::table! {
    change_requests (id) {
        id -> Integer,
        project -> Text,
        environment -> Text,
        title -> Nullable<Text>,
        state -> Text,
        min_approvals -> Integer,
        created_by_user_id -> Integer,
        created_at -> Timestamp,
        state_timestamps -> Text,
        scheduled_at -> Nullable<Timestamp>,
        scheduled_by_user_id -> Nullable<Integer>,
        schedule_status -> Nullable<Text>,
        schedule_reason -> Nullable<Text>,
    }
}

diesel::table! {
    client_applications (app_name) {
        app_name -> Text,
        strategies -> Text,
        description -> Nullable<Text>,
        url -> Nullable<Text>,
        color -> Nullable<Text>,
        icon -> Nullable<Text>,
        created_at -> Timestamp,
        seen_at -> Timestamp,
    }
}

diesel::table! {
    client_instances (app_name, instance_id, environment) {
        app_name -> Text,
        instance_id -> Text,
        environment -> Text,
        sdk_version -> Nullable<Text>,
        sdk_type -> Text,
        client_ip -> Nullable<Text>,
        projects -> Text,
        started -> Nullable<Timestamp>,
        interval_ms -> Nullable<BigInt>,
        created_at -> Timestamp,
        last_seen -> Timestamp,
    }
}

diesel::table! {
    client_usage (feature_name, app_name, environment, hour) {
        feature_name -> Text,
        app_name -> Text,
        environment -> Text,
        hour -> Timestamp,
        yes -> BigInt,
        no -> BigInt,
        variants -> Text,
    }
}

diesel::table! {
    context_fields (name) {
        name -> Text,
        description -> Nullable<Text>,
        stickiness -> Bool,
        sort_order -> Integer,
        legal_values -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    environments (name) {
        name -> Text,
        environment_type -> Text,
        sort_order -> Integer,
        enabled -> Bool,
        created_at -> Timestamp,
    }
}

diesel::table! {
    events (id) {
        id -> Integer,
        event_type -> Text,
        created_by -> Text,
        created_at -> Timestamp,
        project -> Nullable<Text>,
        environment -> Nullable<Text>,
        feature_name -> Nullable<Text>,
        data -> Nullable<Text>,
        pre_data -> Nullable<Text>,
        created_by_user_id -> Nullable<Integer>,
        tags -> Nullable<Text>,
        announced -> Bool,
        group_type -> Nullable<Text>,
        group_id -> Nullable<Text>,
    }
}

diesel::table! {
    feature_dependencies (child) {
        child -> Text,
        parent -> Text,
        enabled -> Bool,
        variants -> Text,
    }
}

diesel::table! {
    feature_environments (feature_name, environment_name) {
        feature_name -> Text,
        environment_name -> Text,
        enabled -> Bool,
        variants -> Text,
        last_seen_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    feature_lifecycles (feature_name, stage) {
        feature_name -> Text,
        stage -> Text,
        status -> Nullable<Text>,
        status_value -> Nullable<Text>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    feature_strategies (id) {
        id -> Text,
        feature_name -> Text,
        environment_name -> Text,
        strategy_name -> Text,
        title -> Nullable<Text>,
        disabled -> Bool,
        sort_order -> Integer,
        parameters -> Text,
        constraints -> Text,
        variants -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    feature_strategy_segments (strategy_id, segment_id) {
        strategy_id -> Text,
        segment_id -> Integer,
    }
}

diesel::table! {
    feature_tags (feature_name, tag_type, tag_value) {
        feature_name -> Text,
        tag_type -> Text,
        tag_value -> Text,
        created_by_user_id -> Nullable<Integer>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    feature_types (id) {
        id -> Text,
        name -> Text,
        description -> Text,
        lifetime_days -> Nullable<Integer>,
        sort_order -> Integer,
    }
}

diesel::table! {
    features (name) {
        name -> Text,
        project_id -> Text,
        feature_type -> Text,
        description -> Nullable<Text>,
        impression_data -> Bool,
        stale -> Bool,
        archived_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
        created_by_user_id -> Nullable<Integer>,
    }
}

diesel::table! {
    group_users (group_id, user_id) {
        group_id -> Integer,
        user_id -> Integer,
        created_at -> Timestamp,
        created_by -> Nullable<Text>,
    }
}

diesel::table! {
    groups (id) {
        id -> Integer,
        name -> Text,
        description -> Nullable<Text>,
        mappings_sso -> Text,
        root_role_id -> Nullable<Integer>,
        created_at -> Timestamp,
        created_by -> Nullable<Text>,
    }
}

diesel::table! {
    integration_events (id) {
        id -> Integer,
        integration_id -> Integer,
        created_at -> Timestamp,
        state -> Text,
        state_details -> Text,
        event -> Text,
        details -> Text,
    }
}

diesel::table! {
    login_sessions (token_hash) {
        token_hash -> Text,
        user_id -> Integer,
        created_at -> Timestamp,
        expires_at -> Timestamp,
        via_oidc -> Bool,
        id_token -> Nullable<Text>,
    }
}

diesel::table! {
    oidc_logins (cookie_hash) {
        cookie_hash -> Text,
        state -> Text,
        nonce -> Text,
        pkce_verifier -> Text,
        return_to -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    personal_access_tokens (id) {
        id -> Integer,
        secret_hash -> Text,
        description -> Text,
        user_id -> Integer,
        expires_at -> Timestamp,
        created_at -> Timestamp,
        seen_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    project_access (id) {
        id -> Integer,
        project_id -> Text,
        role_id -> Integer,
        user_id -> Nullable<Integer>,
        group_id -> Nullable<Integer>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    project_environments (project_id, environment_name) {
        project_id -> Text,
        environment_name -> Text,
    }
}

diesel::table! {
    projects (id) {
        id -> Text,
        name -> Text,
        description -> Nullable<Text>,
        created_at -> Timestamp,
        mode -> Text,
        feature_naming -> Nullable<Text>,
        link_templates -> Text,
    }
}

diesel::table! {
    public_signup_token_users (secret, user_id) {
        secret -> Text,
        user_id -> Integer,
        created_at -> Timestamp,
    }
}

diesel::table! {
    public_signup_tokens (secret) {
        secret -> Text,
        name -> Text,
        url -> Nullable<Text>,
        role_id -> Integer,
        enabled -> Bool,
        expires_at -> Timestamp,
        created_at -> Timestamp,
        created_by -> Nullable<Text>,
    }
}

diesel::table! {
    role_permissions (role_id, permission, environment) {
        role_id -> Integer,
        permission -> Text,
        environment -> Text,
    }
}

diesel::table! {
    roles (id) {
        id -> Integer,
        name -> Text,
        role_type -> Text,
        description -> Nullable<Text>,
    }
}

diesel::table! {
    sealed_secrets (owner) {
        owner -> Text,
        sealed -> Text,
    }
}

diesel::table! {
    segments (id) {
        id -> Integer,
        name -> Text,
        description -> Nullable<Text>,
        project_id -> Nullable<Text>,
        constraints -> Text,
        created_by -> Nullable<Text>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    settings (name) {
        name -> Text,
        content -> Text,
    }
}

diesel::table! {
    strategy_types (name) {
        name -> Text,
        title -> Nullable<Text>,
        description -> Nullable<Text>,
        parameters -> Text,
        built_in -> Bool,
        created_at -> Timestamp,
        deprecated -> Bool,
        display_name -> Nullable<Text>,
        sort_order -> Integer,
    }
}

diesel::table! {
    tag_types (name) {
        name -> Text,
        description -> Nullable<Text>,
        icon -> Nullable<Text>,
        color -> Nullable<Text>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    tags (tag_type, value) {
        tag_type -> Text,
        value -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    unknown_flags (name, app_name, environment) {
        name -> Text,
        app_name -> Text,
        environment -> Text,
        seen_at -> Timestamp,
    }
}

diesel::table! {
    user_splashes (user_id, splash_id) {
        user_id -> Integer,
        splash_id -> Text,
        seen -> Bool,
    }
}

diesel::table! {
    users (id) {
        id -> Integer,
        name -> Nullable<Text>,
        username -> Nullable<Text>,
        email -> Nullable<Text>,
        password_hash -> Nullable<Text>,
        root_role -> Integer,
        login_attempts -> Integer,
        created_at -> Timestamp,
        seen_at -> Nullable<Timestamp>,
        is_service -> Bool,
        custom_root_role -> Nullable<Integer>,
    }
}

diesel::table! {
    flag_versions (feature, environment, from_revision) {
        feature -> Text,
        environment -> Text,
        from_revision -> Integer,
        to_revision -> Nullable<Integer>,
        project -> Text,
        archived -> Bool,
        in_project -> Bool,
        body -> Text,
    }
}

diesel::table! {
    history_start (id) {
        id -> Integer,
        revision -> Integer,
        started_at -> Timestamp,
    }
}

diesel::table! {
    segment_versions (segment_id, from_revision) {
        segment_id -> Integer,
        from_revision -> Integer,
        to_revision -> Nullable<Integer>,
        body -> Text,
    }
}

diesel::joinable!(change_request_changes -> change_requests (change_request_id));
diesel::joinable!(change_request_comments -> change_requests (change_request_id));
diesel::joinable!(change_request_reviews -> change_requests (change_request_id));
diesel::joinable!(change_request_settings -> environments (environment));
diesel::joinable!(change_request_settings -> projects (project));
diesel::joinable!(change_requests -> environments (environment));
diesel::joinable!(change_requests -> projects (project));
diesel::joinable!(feature_environments -> environments (environment_name));
diesel::joinable!(feature_environments -> features (feature_name));
diesel::joinable!(feature_lifecycles -> features (feature_name));
diesel::joinable!(feature_strategies -> environments (environment_name));
diesel::joinable!(feature_strategies -> features (feature_name));
diesel::joinable!(feature_strategies -> strategy_types (strategy_name));
diesel::joinable!(feature_strategy_segments -> feature_strategies (strategy_id));
diesel::joinable!(feature_strategy_segments -> segments (segment_id));
diesel::joinable!(feature_tags -> features (feature_name));
diesel::joinable!(features -> projects (project_id));
diesel::joinable!(group_users -> groups (group_id));
diesel::joinable!(group_users -> users (user_id));
diesel::joinable!(groups -> roles (root_role_id));
diesel::joinable!(integration_events -> addons (integration_id));
diesel::joinable!(login_sessions -> users (user_id));
diesel::joinable!(personal_access_tokens -> users (user_id));
diesel::joinable!(project_access -> groups (group_id));
diesel::joinable!(project_access -> projects (project_id));
diesel::joinable!(project_access -> roles (role_id));
diesel::joinable!(project_access -> users (user_id));
diesel::joinable!(project_environments -> environments (environment_name));
diesel::joinable!(project_environments -> projects (project_id));
diesel::joinable!(public_signup_token_users -> public_signup_tokens (secret));
diesel::joinable!(public_signup_token_users -> users (user_id));
diesel::joinable!(public_signup_tokens -> roles (role_id));
diesel::joinable!(role_permissions -> roles (role_id));
diesel::joinable!(segments -> projects (project_id));
diesel::joinable!(tags -> tag_types (tag_type));
diesel::joinable!(user_splashes -> users (user_id));
diesel::joinable!(users -> roles (root_role));

diesel::allow_tables_to_appear_in_same_query!(
    addons,
    api_tokens,
    change_request_changes,
    change_request_comments,
    change_request_reviews,
    change_request_settings,
    change_requests,
    client_applications,
    client_instances,
    client_usage,
    context_fields,
    environments,
    events,
    feature_dependencies,
    feature_environments,
    feature_lifecycles,
    feature_strategies,
    feature_strategy_segments,
    feature_tags,
    feature_types,
    features,
    flag_versions,
    group_users,
    groups,
    history_start,
    integration_events,
    login_sessions,
    oidc_logins,
    personal_access_tokens,
    project_access,
    project_environments,
    projects,
    public_signup_token_users,
    public_signup_tokens,
    role_permissions,
    roles,
    sealed_secrets,
    segments,
    segment_versions,
    settings,
    strategy_types,
    tag_types,
    tags,
    unknown_flags,
    user_splashes,
    users,
);
