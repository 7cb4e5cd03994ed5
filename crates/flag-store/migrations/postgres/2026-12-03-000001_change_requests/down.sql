DROP TABLE change_request_comments;
DROP TABLE change_request_reviews;
DROP TABLE change_request_changes;
DROP TABLE change_requests;
DROP TABLE change_request_settings;
