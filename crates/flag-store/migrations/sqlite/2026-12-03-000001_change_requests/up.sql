-- Change requests: a project's environments that take changes only through approved requests,
-- the requests with their changes, reviews and comments, and when an approved one applies itself.

-- An environment of a project whose changes need a change request, and how many distinct people
-- must approve one. No row: direct writes are allowed.
CREATE TABLE change_request_settings (
    project TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    environment TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    required_approvals INTEGER NOT NULL,
    PRIMARY KEY (project, environment)
);

CREATE TABLE change_requests (
    id INTEGER PRIMARY KEY NOT NULL,
    project TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    environment TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    title TEXT,
    -- Draft, In review, Approved, Scheduled, Applied, Cancelled or Rejected.
    state TEXT NOT NULL,
    -- The approvals it needs, fixed when it is sent for review.
    min_approvals INTEGER NOT NULL,
    created_by_user_id INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL,
    -- When it entered each state: a JSON object of state to time.
    state_timestamps TEXT NOT NULL DEFAULT '{}',
    -- While Scheduled: when it applies, who scheduled it, and pending or failed (with the
    -- reason).
    scheduled_at TIMESTAMP,
    scheduled_by_user_id INTEGER,
    schedule_status TEXT,
    schedule_reason TEXT
);
CREATE INDEX change_requests_by_project ON change_requests (project, state);
CREATE INDEX change_requests_due ON change_requests (scheduled_at) WHERE state = 'Scheduled';

-- One change of a request: an action on a flag (or a segment) with its payload, and the object it
-- changes as it was when the change was made, to show what moved since.
CREATE TABLE change_request_changes (
    id INTEGER PRIMARY KEY NOT NULL,
    change_request_id INTEGER NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    feature TEXT,
    segment_id INTEGER,
    action TEXT NOT NULL,
    payload TEXT NOT NULL,
    snapshot TEXT,
    created_by_user_id INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX change_request_changes_by_request ON change_request_changes (change_request_id);
CREATE INDEX change_request_changes_by_feature ON change_request_changes (feature);

-- Approvals and rejections, one of each per person and request.
CREATE TABLE change_request_reviews (
    change_request_id INTEGER NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL,
    decision TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (change_request_id, user_id, decision)
);

CREATE TABLE change_request_comments (
    id INTEGER PRIMARY KEY NOT NULL,
    change_request_id INTEGER NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    text TEXT NOT NULL,
    created_by_user_id INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX change_request_comments_by_request ON change_request_comments (change_request_id);
